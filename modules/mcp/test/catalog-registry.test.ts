/** The MCP catalogue from the hub registry: POST /api/catalog/update, hub syncs, the shipped templates as the offline default. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { FIXTURES, json, startEnv, STDIO_SERVER, stopEnv, waitConnected, type Env } from './helpers.ts';

type Entry = { id: string; name: string; source: string; installed: boolean };
type Update = {
  status: string;
  added: number;
  version: string;
  models?: string;
  parts?: Record<string, { status: string; source: string; count: number; error?: string }>;
};

describe('MCP catalogue: the hub registry', () => {
  let env: Env;
  let base: string;
  let registry: string;
  const catalog = async () => (await json<{ entries: Entry[]; total: number }>(await env.k.request('/api/mcp/catalog'))).entries;
  const entry = async (id: string) => (await catalog()).find((e) => e.id === id);
  const update = async () => {
    const res = await env.k.request('/api/catalog/update', { method: 'POST' });
    return { status: res.status, body: await json<Update>(res) };
  };

  before(async () => {
    base = mkdtempSync(path.join(tmpdir(), 'mcp-registry-'));
    registry = path.join(base, 'registry');
    cpSync(path.join(FIXTURES, 'registry'), registry, { recursive: true });
    env = await startEnv(`[hub]\nregistry_url = "${registry}"\nsync_interval_secs = 0\n`, ['hub']);
  });
  after(async () => {
    await stopEnv(env);
    rmSync(base, { recursive: true, force: true });
  });

  it('before the registry was ever synced the catalogue is the shipped templates, each saying so', async () => {
    const entries = await catalog();
    assert.ok(entries.length >= 14);
    assert.ok(entries.every((e) => e.source === 'builtin'));
    assert.equal(await entry('cloud-files'), undefined);
  });

  it("POST /api/catalog/update syncs the hub and loads the registry's templates (they override a shipped id); the answer reports it", async () => {
    const shipped = (await catalog()).length;
    const res = await update();
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      status: 'updated',
      added: 0,
      updated: 0,
      removed: 0,
      version: res.body.version,
      models: 'not_configured',
      parts: { mcp: { status: 'updated', source: 'registry:hub', count: 2 } },
    });
    const entries = await catalog();
    assert.equal(entries.length, shipped + 1, 'cloud-files is new; github replaces the shipped one; the invalid file is skipped');
    assert.deepEqual(
      [(await entry('cloud-files'))?.source, (await entry('github'))?.name, (await entry('github'))?.source, (await entry('fetch'))?.source],
      ['registry:hub', 'GitHub (registry)', 'registry:hub', 'builtin'],
    );
    assert.equal(await entry('no-transport'), undefined);
    const one = await json<Entry & { required_env: Array<{ name: string }> }>(await env.k.request('/api/mcp/catalog/cloud-files'));
    assert.deepEqual(
      one.required_env.map((e) => e.name),
      ['CLOUD_FILES_TOKEN'],
    );
  });

  it('every hub sync is read: a template added to the registry appears after POST /api/hub/sync, and installs', async () => {
    writeFileSync(
      path.join(registry, 'mcp', 'echo.toml'),
      `id = "echo"\nname = "Echo"\ndescription = "the test server"\n[transport]\ntype = "stdio"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(STDIO_SERVER)}]\n`,
    );
    assert.equal((await env.k.request('/api/hub/sync', { method: 'POST' })).status, 200);
    const echo = await waitFor(() => entry('echo'), 5000, 'the new registry template in the catalogue');
    assert.equal(echo?.source, 'registry:hub');
    const added = await env.k.request('/api/mcp/servers', { method: 'POST', json: { template_id: 'echo', credentials: {} } });
    assert.equal(added.status, 201);
    await waitConnected(env.k, 'echo');
    assert.equal((await entry('echo'))?.installed, true);
  });

  it('an update while the registry is unreachable keeps the templates of the last sync and says why', async () => {
    renameSync(registry, `${registry}-gone`);
    try {
      const res = await update();
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'unchanged');
      const part = res.body.parts?.mcp;
      assert.deepEqual([part?.status, part?.source, part?.count], ['failed', 'registry:hub', 3]);
      assert.match(String(part?.error), /could not be synced .*does not exist.*keeps the 3 templates of its last sync/);
      assert.equal((await entry('cloud-files'))?.source, 'registry:hub');
    } finally {
      renameSync(`${registry}-gone`, registry);
    }
  });
});

describe('MCP catalogue without the hub module', () => {
  it('holds the shipped templates; POST /api/catalog/update with no registry anywhere is still a 400', async () => {
    const env = await startEnv();
    try {
      const entries = (await json<{ entries: Entry[] }>(await env.k.request('/api/mcp/catalog'))).entries;
      assert.ok(entries.length >= 14 && entries.every((e) => e.source === 'builtin'));
      const res = await env.k.request('/api/catalog/update', { method: 'POST' });
      assert.equal(res.status, 400);
      assert.match((await json<{ error: string }>(res)).error, /registry_dir or registry_url/);
    } finally {
      await stopEnv(env);
    }
  });
});
