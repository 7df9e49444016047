import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';
import { clawHome, fangHome } from './fixtures.ts';

const root = mkdtempSync(path.join(tmpdir(), 'migrate-'));
const fang = path.join(root, 'lf');
const claw = path.join(root, 'oc');
let k: TestKernel;

before(async () => {
  fangHome(fang);
  clawHome(claw);
  // Only the fixture homes are found: no real ~/.librefang or ~/.openclaw of the machine.
  process.env.HOME = path.join(root, 'nobody');
  process.env.LIBREFANG_HOME = fang;
  process.env.OPENCLAW_STATE_DIR = claw;
  k = await startTestKernel({ only: ['migrate', 'agents', 'memory', 'error-envelope'] });
});
after(async () => {
  await k?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function call<T = Record<string, unknown>>(p: string, method = 'GET', json?: unknown): Promise<{ status: number; body: T }> {
  const res = await k.request(p, { method, json });
  return { status: res.status, body: (await res.json()) as T };
}

interface Outcome {
  imported: Array<{ kind: string; name: string }>;
  skipped: Array<{ kind: string; name: string; reason: string }>;
  warnings: string[];
  report: string;
  dry_run: boolean;
}

test('detect finds the homes named by the environment overrides', async () => {
  const { body } = await call<{ detected: boolean; sources: Array<{ source: string; path: string }> }>('/api/migrate/detect');
  assert.equal(body.detected, true);
  assert.deepEqual(
    body.sources.map((s) => [s.source, s.path]),
    [
      ['librefang', fang],
      ['openclaw', claw],
    ],
  );
});

test('scan lists agents, memory, sessions, skills, schedules, channels and config keys with warnings', async () => {
  const lf = await call<Record<string, unknown>>('/api/migrate/scan', 'POST', { path: fang });
  assert.equal(lf.status, 200);
  assert.deepEqual(
    (lf.body.agents as Array<{ name: string }>).map((a) => a.name),
    ['researcher'],
  );
  assert.deepEqual(lf.body.skills, ['summarise']);
  assert.deepEqual(lf.body.schedules, ['daily digest']);
  assert.deepEqual(lf.body.channels, ['telegram']);
  assert.ok((lf.body.config_keys as string[]).includes('default_model'));
  assert.ok(!(lf.body.config_keys as string[]).includes('api_key'), 'secret keys are not even listed');
  assert.ok((lf.body.warnings as string[]).some((w) => /broken/.test(w)));
  const oc = await call<Record<string, unknown>>('/api/migrate/scan', 'POST', { path: claw });
  assert.deepEqual(
    (oc.body.agents as Array<{ name: string; provider: string }>).map((a) => [a.name, a.provider]),
    [
      ['main', 'anthropic'],
      ['sarah', 'openai'],
    ],
  );
  assert.equal(oc.body.memory, 2);
  assert.deepEqual(oc.body.sessions, ['main/abc']);
  assert.deepEqual(oc.body.schedules, ['morning brief']);
});

test('scan and migrate refuse folders that are not detected homes', async () => {
  for (const p of ['/etc', root, `${fang}/..`]) assert.equal((await call('/api/migrate/scan', 'POST', { path: p })).status, 400, p);
  assert.equal((await call('/api/migrate/scan', 'POST', {})).status, 400);
  assert.equal((await call('/api/migrate', 'POST', { source: 'autogpt' })).status, 400);
  assert.equal((await call('/api/migrate', 'POST', { source: 'openfang' })).status, 404);
  assert.equal((await call('/api/migrate', 'POST', { source: 'openclaw', path: fang })).status, 400);
});

test('migrate: a dry run writes nothing; the run imports agents, memory and skills; a second run skips them all', async () => {
  const dry = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw', dry_run: true });
  assert.equal(dry.status, 200);
  assert.equal(dry.body.dry_run, true);
  assert.ok(dry.body.imported.some((i) => i.kind === 'agent' && i.name === 'main'));
  assert.equal(((await call<unknown[]>('/api/agents')).body as unknown[]).length, 0);

  const run = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw' });
  assert.deepEqual(run.body.imported.map((i) => `${i.kind}:${i.name.split(':')[0]}`).sort(), [
    'agent:main',
    'agent:sarah',
    'memory:main',
    'memory:main',
    'skill:weather',
  ]);
  assert.ok(run.body.skipped.some((s) => s.kind === 'channel' && /tokens are not copied/.test(s.reason)));
  assert.ok(run.body.skipped.some((s) => s.kind === 'session'));
  assert.match(run.body.report, /# Migration from openclaw/);
  const agents = (await call<Array<{ id: string; name: string }>>('/api/agents')).body;
  const main = agents.find((a) => a.name === 'main')!;
  const detail = (await call<{ system_prompt?: string; model: { provider: string } }>(`/api/agents/${main.id}`)).body;
  assert.equal(detail.model.provider, 'anthropic');
  const memory = (await call<{ memories: Array<{ content: string; agent_id: string }> }>('/api/memory?limit=50')).body;
  assert.ok(memory.memories.some((m) => m.content === 'The user lives in Lisbon.' && m.agent_id === main.id));
  assert.ok(existsSync(path.join(k.home, 'skills', 'weather', 'SKILL.md')));
  assert.ok(!readFileSync(path.join(k.home, 'config.toml'), 'utf8').includes('123:secret'));

  const again = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw' });
  assert.deepEqual(again.body.imported, []);
  assert.ok(again.body.skipped.some((s) => s.kind === 'agent' && s.reason === 'an agent with this name exists'));
  assert.ok(again.body.skipped.some((s) => s.kind === 'memory' && s.reason === 'imported by an earlier run'));

  const lf = await call<Outcome>('/api/migrate', 'POST', { source: 'librefang', source_dir: fang });
  assert.deepEqual(lf.body.imported.map((i) => i.name).sort(), ['researcher', 'summarise']);
});
