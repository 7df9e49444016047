/**
 * Operations figures.
 * - Audit: the request-path cost of record() and the amortised cost with the batched write; verify of 1,000,000 entries.
 * - Backup under load: a daemon process whose home holds 100,000 memories and 10,000 messages; GET /api/health at
 *   50 requests per second before and during five POST /api/backup (p50/p99 pooled).
 * - kill -9 during a restore, at several moments: at the next start the home is entirely the old state or entirely
 *   the restored one (agents in the database and a folder component agree).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { ChildProcess } from 'node:child_process';
import { startTestKernel } from '@talon/testing';
import { auditTrail, type AuditTrail } from '../modules/audit/api.ts';
import { freePort, killTree, percentile, spawnDetached, waitHttp } from './util.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function auditFigures(): Promise<Record<string, number>> {
  const k = await startTestKernel({ only: ['audit'], config: '[audit]\nflush_interval_ms = 5000\nmax_batch = 100000\n' });
  try {
    const trail = k.kernel.services.view(auditTrail.id) as AuditTrail;
    const N = 100_000;
    let t = performance.now();
    for (let i = 0; i < N; i++) trail.record({ event_type: 'tool_invoked', agent_id: 'a', details: { tool: 'file_read', i, ms: 3 } });
    const recordUs = ((performance.now() - t) * 1000) / N;
    const f = performance.now();
    await trail.flush();
    const amortisedUs = ((performance.now() - t) * 1000) / N;
    const flushMs = performance.now() - f;
    // Fill up to a million entries, then walk the whole chain.
    for (let round = 0; round < 9; round++) {
      for (let i = 0; i < N; i++) trail.record({ event_type: 'agent_message', agent_id: 'a', details: { tokens_in: i, tokens_out: 7 } });
      await trail.flush();
    }
    t = performance.now();
    const report = await trail.verify();
    const verifyS = (performance.now() - t) / 1000;
    if (report.status !== 'valid') throw new Error('the benchmark chain does not verify');
    return {
      'audit record() µs on the request path (100k)': round(recordUs, 2),
      'audit record()+batched write µs amortised (100k)': round(amortisedUs, 2),
      'audit write of a 100k batch ms': Math.round(flushMs),
      'audit chain length verified': report.chain_length,
      'audit verify s (whole chain)': round(verifyS, 2),
    };
  } finally {
    await k.stop();
  }
}

/** A home with migrations applied (one start of the daemon), then bulk rows written straight into the tables. */
async function populatedHome(): Promise<string> {
  const home = mkdtempSync(path.join(tmpdir(), 'bench-ops-'));
  const k = await startTestKernel({ only: ['backup', 'audit', 'agents', 'memory', 'llm', 'error-envelope'], home, keepHome: true });
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "bulk"\n[model]\nprovider = "default"\nmodel = "default"\n' } });
  const { agent_id } = (await res.json()) as { agent_id: string };
  await k.stop();
  const db = new Database(path.join(home, 'talon.db'));
  const session = (db.prepare('SELECT id FROM agents_sessions LIMIT 1').get() as { id: string }).id;
  const now = Date.now();
  db.transaction(() => {
    const mem = db.prepare(
      `INSERT INTO memory_entries (id, agent_id, level, source, content, created_at, updated_at, accessed_at, decayed_at) VALUES (?, ?, 'agent', 'bench', ?, ?, ?, ?, ?)`,
    );
    for (let i = 0; i < 100_000; i++)
      mem.run(randomUUID(), agent_id, `memory number ${i}: the user mentioned topic ${i % 997} and detail ${i * 7919}`, now, now, now, now);
    const msg = db.prepare(`INSERT INTO agents_messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)`);
    for (let i = 0; i < 10_000; i++) msg.run(session, i % 2 ? 'Assistant' : 'User', `message ${i} `.repeat(20), new Date(now).toISOString());
  })();
  db.close();
  return home;
}

async function startDaemon(home: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "warn"\n`);
  const child = spawnDetached(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/operations/server.ts'), home], {});
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/api/health`, 60_000);
  return { url, child };
}

/** GET /api/health at 50 per second until `until` settles; answers the latencies (ms). */
async function healthLoad(url: string, until: Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  const pending: Array<Promise<void>> = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const t = performance.now();
    pending.push(
      fetch(`${url}/api/health`)
        .then((r) => r.arrayBuffer())
        .then(() => void times.push(performance.now() - t)),
    );
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all(pending);
  return times;
}

async function backupFigures(home: string): Promise<Record<string, number>> {
  const { url, child } = await startDaemon(home);
  try {
    const baseline = await healthLoad(url, new Promise((r) => setTimeout(r, 3000)));
    // Five backups one after the other, the health samples of all of them pooled: a p99 over some 300 requests.
    const during: number[] = [];
    const seconds: number[] = [];
    let size = 0;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const backup = fetch(`${url}/api/backup`, { method: 'POST' }).then(async (r) => ({ status: r.status, body: (await r.json()) as { size_bytes: number } }));
      during.push(...(await healthLoad(url, backup)));
      const made = await backup;
      if (made.status !== 201) throw new Error(`backup answered ${made.status}`);
      seconds.push((performance.now() - started) / 1000);
      size = made.body.size_bytes;
    }
    return {
      'backup s (100k memories, 10k messages, under load; mean of 5)': round(seconds.reduce((a, b) => a + b, 0) / seconds.length, 2),
      'backup archive MB': round(size / 1e6),
      'health p50 ms, no backup': round(percentile(baseline, 50), 2),
      'health p99 ms, no backup': round(percentile(baseline, 99), 2),
      'health requests during the backups': during.length,
      'health p50 ms during the backups': round(percentile(during, 50), 2),
      'health p99 ms during the backups': round(percentile(during, 99), 2),
    };
  } finally {
    await killTree(child);
  }
}

/** Which state the home is in: 'old' (the agent made after the backup, the marker folder), 'new' (neither), or 'mixed'. */
async function stateOf(home: string): Promise<string> {
  const { url, child } = await startDaemon(home);
  try {
    const agents = (await (await fetch(`${url}/api/agents`)).json()) as Array<{ name: string }>;
    const inDb = agents.some((a) => a.name === 'later');
    const onDisk = existsSync(path.join(home, 'skills', 'later'));
    return inDb && onDisk ? 'old' : !inDb && !onDisk ? 'new' : `mixed (db ${inDb}, folder ${onDisk})`;
  } finally {
    await killTree(child);
  }
}

/** Makes the old state: an agent and a folder that the archive does not hold. */
async function diverge(url: string, home: string): Promise<void> {
  const res = await fetch(`${url}/api/agents`, {
    method: 'POST',
    body: JSON.stringify({ manifest_toml: 'name = "later"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
    headers: { 'content-type': 'application/json' },
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`spawn answered ${res.status}`);
  mkdirSync(path.join(home, 'skills', 'later'), { recursive: true });
}

const restore = (url: string, filename: string) =>
  fetch(`${url}/api/restore`, { method: 'POST', body: JSON.stringify({ filename }), headers: { 'content-type': 'application/json' } });

async function crashFigures(home: string): Promise<Record<string, number | string>> {
  let { url, child } = await startDaemon(home);
  const made = (await (await fetch(`${url}/api/backup`, { method: 'POST' })).json()) as { filename: string };
  // One restore to the end: how long the window is that the kills are spread over.
  await diverge(url, home);
  const t = performance.now();
  const full = await restore(url, made.filename);
  const restoreMs = performance.now() - t;
  if (full.status !== 200) throw new Error(`restore answered ${full.status}: ${await full.text()}`);
  await killTree(child);
  const seen: string[] = [];
  for (const share of [0.05, 0.2, 0.4, 0.6, 0.75, 0.85, 0.95, 1.05]) {
    ({ url, child } = await startDaemon(home));
    await diverge(url, home);
    void restore(url, made.filename).catch(() => undefined);
    await new Promise((r) => setTimeout(r, share * restoreMs));
    process.kill(-child.pid!, 'SIGKILL');
    await new Promise((r) => child.once('exit', r));
    seen.push(await stateOf(home));
  }
  const consistent = seen.filter((s) => s === 'old' || s === 'new').length;
  return {
    'restore s (uninterrupted)': round(restoreMs / 1000, 2),
    'kill -9 during restore: consistent starts': `${consistent}/${seen.length}`,
    'kill -9 outcomes (5%..105% of the restore time)': seen.join(', '),
  };
}

export async function operations(): Promise<Record<string, number | string>> {
  const audit = await auditFigures();
  const home = await populatedHome();
  try {
    const backup = await backupFigures(home);
    const crash = await crashFigures(home);
    return { ...audit, ...backup, ...crash };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
