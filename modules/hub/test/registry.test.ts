import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import type { ArtifactService } from '@talon/hub';
import type { SkillStore } from '@talon/skills';
import { Registry } from '../services/registry.ts';

const agent = (root: string, name: string) => {
  mkdirSync(path.join(root, 'agents', name), { recursive: true });
  writeFileSync(path.join(root, 'agents', name, 'agent.toml'), `name = "${name}"\ndescription = "test"\n`);
};

test('a failed sync keeps the last good copy and is tried again once the interval passed (not never again)', async () => {
  const base = mkdtempSync(path.join(tmpdir(), 'hub-registry-'));
  const folder = path.join(base, 'registry');
  agent(folder, 'first');
  let url = folder;
  const registry = new Registry({
    name: 'hub',
    url: () => url,
    cacheDir: path.join(base, 'cache'),
    intervalMs: () => 20,
    maxArchiveBytes: () => 1024,
    artifacts: {} as ArtifactService,
    skills: () => ({}) as SkillStore,
  });
  try {
    assert.deepEqual(
      (await registry.entries('agents')).map((e) => e.slug),
      ['first'],
    );
    const good = registry.status();
    assert.equal(good.offline, false);

    rmSync(folder, { recursive: true });
    /** Lists (a sync once the interval has passed), then answers the status. */
    const synced = async () => {
      await registry.entries('agents');
      return registry.status();
    };
    await waitFor(async () => (await synced()).offline, 2000, 'a sync after the interval');
    assert.deepEqual(
      (await registry.entries('agents')).map((e) => e.slug),
      ['first'],
      'the last good listing',
    );
    const failed = registry.status();
    assert.deepEqual([failed.offline, failed.synced_at, failed.revision], [true, good.synced_at, good.revision]);
    assert.match(failed.error ?? '', /does not exist/);

    agent(folder, 'second');
    await waitFor(async () => !(await synced()).offline, 2000, 'a sync after the interval');
    assert.equal(registry.status().offline, false, 'tried again after the interval');

    // Another registry URL is synced at once, whatever the interval.
    const other = path.join(base, 'other');
    agent(other, 'third');
    url = other;
    assert.deepEqual(
      (await registry.entries('agents')).map((e) => e.slug),
      ['third'],
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a one-file entry is read as text (never through a link); each successful sync is reported, saying whether it changed', async () => {
  const base = mkdtempSync(path.join(tmpdir(), 'hub-entry-'));
  const folder = path.join(base, 'registry');
  mkdirSync(path.join(folder, 'workflows'), { recursive: true });
  writeFileSync(path.join(folder, 'workflows', 'brief.toml'), 'id = "brief"\nname = "Brief"\n');
  writeFileSync(path.join(base, 'secret.toml'), 'id = "secret"\nname = "Secret"\n');
  symlinkSync(path.join(base, 'secret.toml'), path.join(folder, 'workflows', 'linked.toml'));
  const synced: Array<[string | null, boolean]> = [];
  let url = folder;
  const registry = new Registry({
    name: 'hub',
    url: () => url,
    cacheDir: path.join(base, 'cache'),
    intervalMs: () => 0,
    maxArchiveBytes: () => 1024,
    artifacts: {} as ArtifactService,
    skills: () => ({}) as SkillStore,
    onSynced: (status, changed) => synced.push([status.revision, changed]),
  });
  try {
    assert.deepEqual(
      (await registry.entries('workflows')).map((e) => [e.slug, e.name]),
      [['brief', 'Brief']],
      'the linked file is no entry',
    );
    assert.equal(await registry.readEntry('workflows', 'brief'), 'id = "brief"\nname = "Brief"\n');
    await assert.rejects(registry.readEntry('workflows', 'linked'), /not in the hub registry/);
    await assert.rejects(registry.readEntry('workflows', 'nope'), (err: Error & { statusCode?: number }) => err.statusCode === 404);
    assert.equal(synced.length, 1);
    assert.equal(synced[0][1], true, 'the first sync changes the revision');
    await registry.sync();
    assert.deepEqual(synced[1], [synced[0][0], false], 'nothing changed');
    url = path.join(base, 'missing');
    await registry.sync();
    assert.equal(synced.length, 2, 'a failed sync is not reported as one');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("an HTTP index gives a one-file entry's text in its item's toml field", async () => {
  const base = mkdtempSync(path.join(tmpdir(), 'hub-index-'));
  const index = {
    version: '7',
    workflows: [
      { slug: 'inline', name: 'Inline', toml: 'id = "inline"\n' },
      { slug: 'bare', name: 'Bare' },
    ],
  };
  const registry = new Registry({
    name: 'hub',
    url: () => 'http://127.0.0.1:9/index.json',
    cacheDir: path.join(base, 'cache'),
    intervalMs: () => 0,
    maxArchiveBytes: () => 1024 * 1024,
    artifacts: { download: async () => Buffer.from(JSON.stringify(index)) } as unknown as ArtifactService,
    skills: () => ({}) as SkillStore,
  });
  try {
    assert.equal(await registry.readEntry('workflows', 'inline'), 'id = "inline"\n');
    assert.equal(await registry.readEntry('workflows', 'bare'), undefined);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
