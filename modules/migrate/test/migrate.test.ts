import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
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
  k = await startTestKernel({ only: ['migrate', 'agents', 'memory', 'scheduler', 'error-envelope', 'tools'] });
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
  assert.deepEqual(lf.body.schedules, ['daily digest', 'orphan', 'wake']);
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
  assert.deepEqual(oc.body.schedules, ['morning brief', 'hourly ping', 'heartbeat']);
});

test('scan and migrate refuse folders that are not detected homes', async () => {
  for (const p of ['/etc', root, `${fang}/..`]) assert.equal((await call('/api/migrate/scan', 'POST', { path: p })).status, 400, p);
  assert.equal((await call('/api/migrate/scan', 'POST', {})).status, 400);
  assert.equal((await call('/api/migrate', 'POST', { source: 'autogpt' })).status, 400);
  assert.equal((await call('/api/migrate', 'POST', { source: 'openfang' })).status, 404);
  assert.equal((await call('/api/migrate', 'POST', { source: 'openclaw', path: fang })).status, 400);
});

test('migrate: a dry run writes nothing; the run imports agents, memory, skills and schedules; a second run skips them all', async () => {
  const dry = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw', dry_run: true });
  assert.equal(dry.status, 200);
  assert.equal(dry.body.dry_run, true);
  assert.ok(dry.body.imported.some((i) => i.kind === 'agent' && i.name === 'main'));
  assert.ok(
    dry.body.imported.some((i) => i.kind === 'schedule' && i.name === 'morning brief'),
    'its agent is one the run would import',
  );
  assert.equal(((await call<unknown[]>('/api/agents')).body as unknown[]).length, 0);

  const run = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw' });
  assert.deepEqual(run.body.imported.map((i) => `${i.kind}:${i.name.split(':')[0]}`).sort(), [
    'agent:main',
    'agent:sarah',
    'memory:main',
    'memory:main',
    'schedule:hourly ping',
    'schedule:morning brief',
    'skill:weather',
  ]);
  assert.ok(run.body.skipped.some((s) => s.kind === 'schedule' && s.name === 'heartbeat' && /only scheduled agent turns/.test(s.reason)));
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
  const jobs = (await call<{ items: Array<Record<string, unknown>> }>('/api/schedules')).body.items;
  const brief = jobs.find((j) => j.name === 'morning brief')!;
  assert.deepEqual(
    [brief.agent_id, brief.cron, brief.tz, brief.prompt, brief.session_mode, brief.enabled],
    [main.id, '0 7 * * *', 'Europe/Lisbon', 'Brief me on the day.', 'new', true],
  );
  const ping = jobs.find((j) => j.name === 'hourly ping')!;
  assert.deepEqual([ping.cron, ping.session_mode, ping.enabled], ['every 3600s', 'persistent', false]);

  const again = await call<Outcome>('/api/migrate', 'POST', { source: 'openclaw' });
  assert.deepEqual(again.body.imported, []);
  assert.ok(again.body.skipped.some((s) => s.kind === 'agent' && s.reason === 'an agent with this name exists'));
  assert.ok(again.body.skipped.some((s) => s.kind === 'memory' && s.reason === 'imported by an earlier run'));
  assert.ok(again.body.skipped.some((s) => s.kind === 'schedule' && s.name === 'morning brief' && s.reason === 'imported by an earlier run'));
  assert.equal((await call<{ total: number }>('/api/schedules')).body.total, 2, 'no second copy');

  const lf = await call<Outcome>('/api/migrate', 'POST', { source: 'librefang', source_dir: fang });
  assert.deepEqual(lf.body.imported.map((i) => i.name).sort(), ['daily digest', 'researcher', 'summarise']);
  assert.ok(lf.body.skipped.some((s) => s.name === 'orphan' && /its agent is not one of the agents found/.test(s.reason)));
  const digest = (await call<{ items: Array<Record<string, unknown>> }>('/api/schedules')).body.items.find((j) => j.name === 'daily digest')!;
  assert.deepEqual([digest.cron, digest.tz, digest.prompt], ['0 8 * * 1-5', 'America/New_York', 'Digest the news.']);
});
