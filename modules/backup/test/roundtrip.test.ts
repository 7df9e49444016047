import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AgentTestKernel } from '@talon/testing';
import { KEY, call, start } from './env.ts';

let k: AgentTestKernel;

before(async () => {
  k = await start({ modules: ['scheduler', 'skills'] });
});
after(async () => {
  await k?.stop();
});

const manifest = (name: string) => `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;

interface State {
  agents: unknown;
  session: unknown;
  kv: unknown;
  memory: unknown;
  workspace: string;
  skills: string[];
  loadedSkills: unknown;
  schedules: unknown;
}

async function snapshot(agentId: string): Promise<State> {
  const agents = (await call<Array<{ id: string; name: string }>>(k, '/api/agents')).body;
  const session = (await call(k, `/api/agents/${agentId}/session`)).body;
  const kv = (await call(k, `/api/memory/agents/${agentId}/kv`)).body;
  const memory = (await call<{ items?: unknown }>(k, '/api/memory?limit=100')).body;
  const ws = path.join(k.home, 'workspaces', agentId, 'notes.txt');
  const skillsDir = path.join(k.home, 'skills');
  const loaded = (await call<{ skills: Array<{ name: string; version: string }> }>(k, '/api/skills')).body.skills;
  return {
    agents: agents.map((a) => [a.id, a.name]).sort(),
    session,
    kv,
    memory,
    workspace: existsSync(ws) ? readFileSync(ws, 'utf8') : '<none>',
    skills: existsSync(skillsDir) ? readdirSync(skillsDir, { recursive: true }).map(String).sort() : [],
    loadedSkills: loaded.map((s) => [s.name, s.version]).sort(),
    schedules: (await call(k, '/api/schedules')).body,
  };
}

test(
  'round trip: agents, sessions, memory, schedules, workspaces and skills come back identical, in place, without a restart',
  { timeout: 60_000 },
  async () => {
    const spawned = await call<{ agent_id: string }>(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('keeper') } });
    assert.equal(spawned.status, 201);
    const id = spawned.body.agent_id;
    k.fake.enqueue({ text: 'remembered' });
    assert.equal((await call(k, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'hello there' } })).status, 200);
    assert.equal((await call(k, `/api/memory/agents/${id}/kv/colour`, { method: 'PUT', json: { value: 'teal' } })).status, 200);
    assert.equal((await call(k, '/api/memory', { method: 'POST', json: { content: 'the user likes tea', agent_id: id } })).status, 201);
    writeFileSync(path.join(k.home, 'workspaces', id, 'notes.txt'), 'workspace note');
    mkdirSync(path.join(k.home, 'skills', 'greeter'), { recursive: true });
    writeFileSync(path.join(k.home, 'skills', 'greeter', 'SKILL.md'), '---\nname: greeter\ndescription: says hi\nversion: 1.0.0\n---\nSay hi.\n');
    assert.equal((await call(k, '/api/skills/reload', { method: 'POST' })).status, 200);
    const job = { agent_id: id, cron: '0 9 * * 1-5', tz: 'Europe/Paris', prompt: 'Weekday briefing' };
    assert.equal((await call(k, '/api/schedules', { method: 'POST', json: job })).status, 201);
    const before = await snapshot(id);
    assert.ok((before.loadedSkills as string[][]).some(([name]) => name === 'greeter'));
    assert.equal((before.schedules as { total: number }).total, 1);

    const made = await call<{ filename: string; components: string[]; size_bytes: number }>(k, '/api/backup', { method: 'POST' });
    assert.equal(made.status, 201);
    assert.ok(made.body.size_bytes > 0);
    assert.ok(existsSync(path.join(k.home, 'backups', made.body.filename)));

    // Change everything.
    assert.equal((await call(k, `/api/agents/${id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await call(k, '/api/agents', { method: 'POST', json: { manifest_toml: manifest('intruder') } })).status, 201);
    rmSync(path.join(k.home, 'skills', 'greeter'), { recursive: true });
    writeFileSync(path.join(k.home, 'skills', 'stray.md'), 'x');
    assert.equal((await call(k, '/api/skills/reload', { method: 'POST' })).status, 200);
    assert.notDeepEqual(await snapshot(id), before);
    // The kernel's tables of the running processes describe now, not the archived moment: a restore keeps them.
    const store = k.kernel.store;
    const feedSeq = async () =>
      (
        await store.one<{ seq: number }>(
          store.pick({
            sqlite: "SELECT seq FROM sqlite_sequence WHERE name = 'kernel_changes'",
            postgres: "SELECT last_value AS seq FROM pg_sequences WHERE sequencename = 'kernel_changes_seq_seq'",
          }),
        )
      )?.seq ?? 0;
    await store.run('INSERT INTO kernel_changes (node, module, topic, key, at) VALUES (?, ?, ?, ?, ?)', ['elsewhere', 'test', 'after-backup', '', Date.now()]);
    const seqBefore = await feedSeq();
    const nodesBefore = await store.many('SELECT id, state FROM kernel_nodes ORDER BY id');

    const restored = await call<{ status: string; components: string[]; modules_restarted: string[]; restored_files: number }>(k, '/api/restore', {
      method: 'POST',
      json: { filename: made.body.filename },
    });
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    assert.equal(restored.body.status, 'restored');
    assert.ok(restored.body.modules_restarted.includes('agents'));
    assert.ok(restored.body.modules_restarted.includes('memory'));
    assert.ok(restored.body.modules_restarted.includes('scheduler'));
    assert.deepEqual(await snapshot(id), before);
    assert.ok((await feedSeq()) >= seqBefore, 'the change feed sequence is not set back');
    assert.ok(await store.one("SELECT 1 FROM kernel_changes WHERE topic = 'after-backup'"));
    assert.deepEqual(await store.many('SELECT id, state FROM kernel_nodes ORDER BY id'), nodesBefore);
    assert.ok((await k.kernel.nodes.live()).includes(k.kernel.nodes.id));
    // The workspace is back where the agent looks for it.
    assert.equal(readFileSync(path.join(k.home, 'workspaces', id, 'notes.txt'), 'utf8'), 'workspace note');
    // The agent works on with its restored session.
    k.fake.enqueue({ text: 'still here' });
    assert.equal((await call(k, `/api/agents/${id}/message`, { method: 'POST', json: { message: 'again' } })).status, 200);

    // The audit trail is not rolled back by a restore: it holds the backup and the restore, and verifies.
    const audit = await call<{ entries: Array<{ event_type: string }> }>(k, '/api/audit/recent?limit=500');
    const types = audit.body.entries.map((e) => e.event_type);
    assert.ok(types.includes('backup_created'));
    assert.ok(types.includes('backup_restored'));
    assert.ok(types.includes('agent_spawned'));
    assert.equal((await call<{ status: string }>(k, '/api/audit/verify')).body.status, 'valid');

    // Secrets never go into an archive, and the key still works after the restore.
    const listed = await call<{ backups: Array<{ filename: string; components: string[] }> }>(k, '/api/backups');
    assert.equal(listed.body.backups[0].filename, made.body.filename);
    assert.ok(listed.body.backups[0].components.includes('database'));
    const raw = readFileSync(path.join(k.home, 'backups', made.body.filename));
    const { gunzipSync } = await import('node:zlib');
    assert.ok(!gunzipSync(raw).includes(Buffer.from(KEY)));
    assert.match(readFileSync(path.join(k.home, 'config.toml'), 'utf8'), new RegExp(KEY));
  },
);
