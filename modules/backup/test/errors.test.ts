import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { FakeProvider, type TestKernel } from '@talon/testing';
import { auth, call, start } from './env.ts';

/** The test's own home: the last test starts a second kernel on it (a restart), and each kernel's stop() keeps it. */
const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-errors-'));
let fake: FakeProvider;
let k: TestKernel;
let good: string;

before(async () => {
  fake = new FakeProvider();
  await fake.start();
  k = await start({ fake, home });
  good = (await call<{ filename: string }>(k, '/api/backup', { method: 'POST', json: { components: ['database', 'config'] } })).body.filename;
});
after(async () => {
  await k?.stop();
  await fake?.stop();
  rmSync(home, { recursive: true, force: true });
});

const dir = () => path.join(k.home, 'backups');
const agents = async () => (await call<unknown[]>(k, '/api/agents')).body.length;

async function expectError(status: number, p: string, init: { method?: string; json?: unknown }, pattern: RegExp): Promise<void> {
  const res = await call<{ error: string }>(k, p, init);
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.match(res.body.error, pattern);
}

test('restore refuses a corrupt archive, a foreign one and a cut one with 400, changing nothing', async () => {
  await call(k, '/api/agents', { method: 'POST', json: { manifest_toml: 'name = "stays"\n[model]\nprovider = "default"\nmodel = "default"\n' } });
  const count = await agents();
  const bytes = readFileSync(path.join(dir(), good));
  const flipped = Buffer.from(bytes);
  flipped[Math.floor(flipped.length / 2)] ^= 0xff;
  writeFileSync(path.join(dir(), 'talon-backup-20200101T000000001Z.tar.gz'), flipped);
  writeFileSync(path.join(dir(), 'talon-backup-20200101T000000002Z.tar.gz'), gzipSync(Buffer.from('not a tar at all')));
  writeFileSync(path.join(dir(), 'talon-backup-20200101T000000003Z.tar.gz'), bytes.subarray(0, Math.floor(bytes.length * 0.7)));
  for (const name of ['1', '2', '3']) {
    await expectError(400, '/api/restore', { method: 'POST', json: { filename: `talon-backup-20200101T00000000${name}Z.tar.gz` } }, /invalid backup archive/);
  }
  assert.equal(await agents(), count);
  assert.deepEqual(
    readdirSync(path.join(k.home, 'data', 'backup')).filter((n) => n.startsWith('restore-')),
    [],
  );
});

test('restore: bad names, unknown files, components the archive lacks, empty selections', async () => {
  await expectError(400, '/api/restore', { method: 'POST', json: {} }, /filename/);
  await expectError(400, '/api/restore', { method: 'POST', json: { filename: '../../config.toml' } }, /invalid backup filename/);
  await expectError(404, '/api/restore', { method: 'POST', json: { filename: 'talon-backup-20990101T000000000Z.tar.gz' } }, /not found/);
  await expectError(400, '/api/restore', { method: 'POST', json: { filename: good, components: [] } }, /components/);
  await expectError(400, '/api/restore', { method: 'POST', json: { filename: good, components: ['bogus'] } }, /components/);
  await expectError(400, '/api/restore', { method: 'POST', json: { filename: good, components: ['skills'] } }, /does not hold 'skills'/);
});

test('backup: bad bodies are 400; delete is path-safe, 204 then 404', async () => {
  await expectError(400, '/api/backup', { method: 'POST', json: { components: ['nope'] } }, /components/);
  await expectError(400, '/api/backup', { method: 'POST', json: { components: [] } }, /components/);
  await expectError(400, '/api/backup', { method: 'POST', json: { extra: 1 } }, /extra|additional/);
  await expectError(400, '/api/backups/..%2Fconfig.toml', { method: 'DELETE' }, /invalid backup filename/);
  await expectError(400, '/api/backups/evil.txt', { method: 'DELETE' }, /invalid backup filename/);
  copyFileSync(path.join(dir(), good), path.join(dir(), 'talon-backup-20200101T000000009Z.tar.gz'));
  assert.equal((await call(k, '/api/backups/talon-backup-20200101T000000009Z.tar.gz', { method: 'DELETE' })).status, 204);
  assert.ok(!existsSync(path.join(dir(), 'talon-backup-20200101T000000009Z.tar.gz')));
  await expectError(404, '/api/backups/talon-backup-20200101T000000009Z.tar.gz', { method: 'DELETE' }, /not found/);
});

test('download: the archive as it is on disk, as an attachment; path-safe; 404 for an unknown one', async () => {
  const res = await k.request(`/api/backups/${good}`, { headers: auth });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/gzip');
  assert.equal(res.headers.get('content-disposition'), `attachment; filename="${good}"`);
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), readFileSync(path.join(dir(), good)));
  await expectError(400, '/api/backups/..%2Fconfig.toml', {}, /invalid backup filename/);
  await expectError(404, '/api/backups/talon-backup-20200101T000000008Z.tar.gz', {}, /not found/);
  assert.equal((await k.request(`/api/backups/${good}`)).status, 401, 'the key is required');
});

test('list: newest first, with the manifest of each; an unreadable archive is listed without one', async () => {
  const { body } = await call<{ backups: Array<{ filename: string; components: string[] | null; valid_manifest: boolean }>; total: number }>(k, '/api/backups');
  assert.equal(body.total, body.backups.length);
  const mine = body.backups.find((b) => b.filename === good)!;
  assert.deepEqual(mine.components, ['database', 'config']);
  const names = body.backups.map((b) => b.filename);
  assert.deepEqual(names, [...names].sort().reverse());
  assert.ok(body.backups.some((b) => !b.valid_manifest));
});

test('a restore interrupted after its commit point is finished at the next start', async () => {
  const staging = path.join(home, 'data', 'backup', 'restore-crashed');
  mkdirSync(path.join(staging, 'files', 'skills', 'from-backup'), { recursive: true });
  writeFileSync(path.join(staging, 'files', 'skills', 'from-backup', 'SKILL.md'), 'restored');
  mkdirSync(path.join(home, 'skills', 'current'), { recursive: true });
  await k.kernel.store.run('INSERT INTO backup_restore_journal (id, staging, components, created_at) VALUES (?, ?, ?, ?)', [
    'crashed',
    staging,
    JSON.stringify(['skills']),
    new Date().toISOString(),
  ]);
  // The kit's stop(): on PostgreSQL it also lets go of the home's database (the next kernel takes it again).
  await k.stop();
  k = await start({ fake, home });
  assert.equal(readFileSync(path.join(home, 'skills', 'from-backup', 'SKILL.md'), 'utf8'), 'restored');
  assert.ok(!existsSync(path.join(home, 'skills', 'current')));
  assert.ok(!existsSync(staging));
  assert.equal((await k.kernel.store.one<{ n: number }>('SELECT count(*) AS n FROM backup_restore_journal'))?.n, 0);
});
