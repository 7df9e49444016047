/**
 * Several processes on one home (or the nodes of a fleet sharing a data directory): what a gone process's backup or
 * restore left behind is removed — at the start of another process, or when a live one finds its node dead — and the
 * work files of a backup another live process is writing are left alone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, waitFor, type TestKernel } from '@talon/testing';
import { start } from './env.ts';

const home = mkdtempSync(path.join(tmpdir(), 'talon-backup-leftovers-'));
const work = path.join(home, 'data', 'backup');
const backups = path.join(home, 'backups');
const fake = new FakeProvider();
let a: TestKernel;
let b: TestKernel | undefined;

before(async () => {
  await fake.start();
  a = await start({ fake, home, heartbeatMs: 200 });
  mkdirSync(work, { recursive: true });
  mkdirSync(backups, { recursive: true });
});
after(async () => {
  await b?.stop();
  await a?.stop();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

/** A snapshot folder and a partial archive as a backup of `node` in progress makes them. */
function backupOf(node: string): { folder: string; partial: string } {
  const folder = path.join(work, `snapshot-${node}-${randomUUID()}`);
  mkdirSync(folder);
  writeFileSync(path.join(folder, 'talon.db'), 'snapshot');
  const partial = path.join(backups, `talon-backup-${randomUUID()}.tar.gz.${node}.partial`);
  writeFileSync(partial, 'half an archive');
  return { folder, partial };
}

test('a process starting removes what gone processes left, never the backup a live one is writing', async () => {
  const live = backupOf(a.kernel.nodes.id);
  const gone = backupOf(randomUUID());
  const staging = path.join(work, `restore-${randomUUID()}-${randomUUID()}`);
  mkdirSync(staging);
  // Names of an older version carry no node: nobody can be writing them now.
  const older = [path.join(work, `snapshot-${randomUUID()}`), path.join(backups, 'talon-backup-old.tar.gz.partial')];
  mkdirSync(older[0]!);
  writeFileSync(older[1]!, 'old');

  b = await start({ fake, home, heartbeatMs: 200 });
  for (const p of [gone.folder, gone.partial, staging, ...older]) assert.ok(!existsSync(p), `${path.basename(p)} removed`);
  assert.ok(existsSync(live.folder), 'the live process’s snapshot stays');
  assert.ok(existsSync(live.partial), 'the live process’s archive stays');
});

test('a process found dead: a live one removes its work files', async () => {
  const dying = backupOf(b!.kernel.nodes.id);
  const others = backupOf(a.kernel.nodes.id);
  // b falls silent as a killed process would: its heartbeat stops and it never marks itself stopped.
  b!.kernel.nodes.silence();
  await waitFor(() => !existsSync(dying.folder) && !existsSync(dying.partial), 10_000, 'the dead process’s work files to go');
  assert.ok(existsSync(others.folder) && existsSync(others.partial), 'a’s own stay');
});
