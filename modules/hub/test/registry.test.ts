import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
    await sleep(30);
    assert.deepEqual(
      (await registry.entries('agents')).map((e) => e.slug),
      ['first'],
      'the last good listing',
    );
    const failed = registry.status();
    assert.deepEqual([failed.offline, failed.synced_at, failed.revision], [true, good.synced_at, good.revision]);
    assert.match(failed.error ?? '', /does not exist/);

    agent(folder, 'second');
    await sleep(30);
    await registry.entries('agents');
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
