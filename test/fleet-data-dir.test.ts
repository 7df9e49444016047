/**
 * The shared data directory of a fleet (issue 30, item 2): real service processes (`node --import tsx bin/talon.ts`)
 * on one PostgreSQL database, each with a home of its own and TALON_DATA_DIR naming one shared folder. What one node
 * writes there (an agent's workspace file, an upload) the other reads; the secret key is made there; each node's log
 * file stays in its own home. A node with another data directory, with none, with a different marker, with a path
 * that is not a directory, or with another secret key refuses to start (exit code 2) saying why. The newer-schema
 * refusal is tested in test/postgres/kernel.test.ts ("a database migrated by a newer version").
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, postgresMissing, startPostgres, startTestKernel, waitFor, type PostgresServer } from '@talon/testing';

const root = path.resolve(import.meta.dirname, '..');
const temp = (prefix: string) => mkdtempSync(path.join(tmpdir(), `talon-fleet-${prefix}-`));
const folders: string[] = [];
const children = new Set<ChildProcess>();

interface Node {
  port: number;
  child: ChildProcess;
  output: string[];
}

/** A home with its config.toml (the model is never called: no test here runs a turn). */
function makeHome(): string {
  const home = temp('home');
  folders.push(home);
  const config = ['log_level = "info"', '[default_model]', 'provider = "openai"', 'model = "m"', 'base_url = "http://127.0.0.1:9/v1"'];
  writeFileSync(path.join(home, 'config.toml'), `${config.join('\n')}\n`);
  return home;
}

/** The process's environment: this test's variables only, none of the runner's fleet settings. */
function environment(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TALON_HOME', 'TALON_DATA_DIR', 'TALON_DATABASE_URL', 'TALON_SECRET_KEY_FILE', 'TALON_API_LISTEN']) delete env[name];
  for (const [name, value] of Object.entries(vars)) if (value !== undefined) env[name] = value;
  return env;
}

/** Starts the service in its own process group (stopped by its pid after the tests). */
async function launch(vars: Record<string, string | undefined>): Promise<Node> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    cwd: root,
    env: environment({ ...vars, TALON_API_LISTEN: `127.0.0.1:${port}` }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return { port, child, output };
}

/** A node that serves: /api/health answers 200 within 90 s (a cold start compiles every module). */
async function startNode(vars: Record<string, string | undefined>): Promise<Node> {
  const node = await launch(vars);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${node.port}/api/health`)).status === 200, 90_000, 'the node to answer').catch((err: Error) => {
    throw new Error(`${err.message}; exit code ${node.child.exitCode}; output: ${node.output.join('').slice(-3000)}`);
  });
  return node;
}

/** A node that must refuse to start: its exit code and what it wrote, within 90 s. */
async function refusal(vars: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const node = await launch(vars);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the node did not exit within 90 s: ${node.output.join('').slice(-3000)}`)), 90_000);
    if (node.child.exitCode !== null) resolve(node.child.exitCode);
    node.child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, output: node.output.join('') };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the shared data directory of a fleet on PostgreSQL', { skip: postgresMissing() }, () => {
  let server: PostgresServer;
  let url: string;
  let shared: string;
  const homes = {} as Record<'a' | 'b', string>;
  const nodes: Partial<Record<'a' | 'b', Node>> = {};
  const fleet = (home: string) => ({ TALON_HOME: home, TALON_DATA_DIR: shared, TALON_DATABASE_URL: url });
  const call = (node: Node, pathname: string, init?: RequestInit) => fetch(`http://127.0.0.1:${node.port}${pathname}`, init);

  before(async () => {
    shared = temp('shared');
    folders.push(shared);
    Object.assign(homes, { a: makeHome(), b: makeHome() });
    server = await startPostgres();
    url = await server.createDatabase();
    // Two first nodes at once: one makes the marker, both agree on it.
    [nodes.a, nodes.b] = await Promise.all([startNode(fleet(homes.a)), startNode(fleet(homes.b))]);
  });

  after(async () => {
    for (const child of children) process.kill(-child.pid!, 'SIGKILL');
    await waitFor(() => children.size === 0, 10_000, 'the nodes to exit').catch(() => undefined);
    if (url) await server.dropDatabase(url).catch(() => undefined);
    await server?.stop();
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  test('the marker is in the shared folder and in the database, not in the homes', async () => {
    const marker = readFileSync(path.join(shared, '.talon-fleet'), 'utf8').trim();
    assert.match(marker, /^[0-9a-f-]{36}$/);
    for (const home of Object.values(homes)) assert.equal(existsSync(path.join(home, '.talon-fleet')), false);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT key, value FROM kernel_fleet');
      assert.deepEqual(rows, [{ key: 'data_dir', value: marker }]);
    } finally {
      await client.end();
    }
    assert.deepEqual(
      readdirSync(shared).filter((f) => f.includes('.tmp')),
      [],
      'no temporary marker is left behind',
    );
  });

  test("an agent's workspace file and an upload written through one node are read through the other", async () => {
    const { a, b } = nodes as Record<'a' | 'b', Node>;
    const spawned = await call(a, '/api/agents', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ manifest_toml: 'name = "shared-files"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
    });
    assert.equal(spawned.status, 201, await spawned.clone().text());
    const { agent_id: id } = (await spawned.json()) as { agent_id: string };
    await waitFor(async () => (await call(b, `/api/agents/${id}`)).status === 200, 5_000, 'the agent on node b');

    const written = await call(a, `/api/agents/${id}/files/notes.txt`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'written on a' });
    assert.equal(written.status, 200, await written.text());
    const read = await call(b, `/api/agents/${id}/files/notes.txt`);
    assert.equal(read.status, 200);
    assert.equal(await read.text(), 'written on a');
    assert.equal(readFileSync(path.join(shared, 'workspaces', id, 'notes.txt'), 'utf8'), 'written on a');

    const bytes = randomBytes(2048);
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'application/octet-stream' }), 'blob.bin');
    const uploaded = await call(a, `/api/agents/${id}/upload`, { method: 'POST', body: form });
    assert.equal(uploaded.status, 201, await uploaded.clone().text());
    const { file_id: fileId } = (await uploaded.json()) as { file_id: string };
    const fetched = await call(b, `/api/uploads/${fileId}`);
    assert.equal(fetched.status, 200);
    assert.deepEqual(Buffer.from(await fetched.arrayBuffer()), bytes);
    assert.ok(existsSync(path.join(shared, 'data', 'agents', 'uploads')), 'uploads are under the shared data folder');
    for (const home of Object.values(homes)) {
      assert.equal(existsSync(path.join(home, 'workspaces')), false, `no workspaces in ${home}`);
      assert.equal(existsSync(path.join(home, 'data')), false, `no module data in ${home}`);
    }
  });

  test('the secret key is made in the shared folder; each node writes its log file in its own home', async () => {
    assert.equal(readFileSync(path.join(shared, 'secret.key')).length, 32);
    assert.equal(existsSync(path.join(shared, 'logs')), false, 'no log folder in the shared folder');
    for (const [name, home] of Object.entries(homes)) {
      assert.equal(existsSync(path.join(home, 'secret.key')), false);
      const files = readdirSync(path.join(home, 'logs'));
      assert.equal(files.length, 1, `${name}: ${files.join(', ')}`);
      const text = readFileSync(path.join(home, 'logs', files[0]), 'utf8');
      const own = `127.0.0.1:${nodes[name as 'a' | 'b']!.port}`;
      assert.ok(text.includes(`"address":"${own}"`), `${name}'s log says where ${name} listens`);
      const other = `127.0.0.1:${nodes[name === 'a' ? 'b' : 'a']!.port}`;
      assert.ok(!text.includes(`"address":"${other}"`), `${name}'s log has none of the other node's lines`);
    }
  });

  test('a node whose data directory is not the fleet’s refuses to start, saying why (exit code 2)', { timeout: 120_000 }, async () => {
    const empty = temp('empty');
    const other = temp('other');
    const file = path.join(temp('file'), 'not-a-folder');
    folders.push(empty, other, path.dirname(file));
    writeFileSync(path.join(other, '.talon-fleet'), 'another-fleet\n');
    writeFileSync(file, 'x');
    const [missing, unset, different, notDir] = await Promise.all([
      refusal({ ...fleet(makeHome()), TALON_DATA_DIR: empty }),
      refusal({ ...fleet(makeHome()), TALON_DATA_DIR: undefined }),
      refusal({ ...fleet(makeHome()), TALON_DATA_DIR: other }),
      refusal({ ...fleet(makeHome()), TALON_DATA_DIR: file }),
    ]);
    const marker = readFileSync(path.join(shared, '.talon-fleet'), 'utf8').trim();
    assert.equal(missing.code, 2, missing.output);
    assert.match(
      missing.output,
      new RegExp(`TALON_DATA_DIR=${escape(empty)} is not the fleet's shared directory: its \\.talon-fleet is missing; mount the same directory on every node`),
    );
    assert.deepEqual(readdirSync(empty), [], 'the refused node took back the marker it made');
    assert.equal(unset.code, 2, unset.output);
    assert.match(
      unset.output,
      /TALON_DATA_DIR is not set, so this node keeps the shared files in its home .*, which is not the fleet's shared directory: its \.talon-fleet is missing/,
    );
    assert.equal(different.code, 2, different.output);
    assert.match(different.output, new RegExp(`its \\.talon-fleet is different \\(another-fleet, not ${marker}\\)`));
    assert.equal(readFileSync(path.join(other, '.talon-fleet'), 'utf8'), 'another-fleet\n', 'a marker found is never changed');
    assert.equal(notDir.code, 2, notDir.output);
    assert.match(notDir.output, new RegExp(`TALON_DATA_DIR=${escape(file)} is not a writable directory`));
  });

  test('a node with the shared folder but another secret key refuses to start, naming the key (exit code 2)', { timeout: 120_000 }, async () => {
    const keyFile = path.join(temp('key'), 'other.key');
    folders.push(path.dirname(keyFile));
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const refused = await refusal({ ...fleet(makeHome()), TALON_SECRET_KEY_FILE: keyFile });
    assert.equal(refused.code, 2, refused.output);
    assert.match(refused.output, new RegExp(`the secret key ${escape(keyFile)} does not open the values sealed in this database`));
  });
});

test('off PostgreSQL a data directory only moves the shared folders: no marker, logs in the home', async () => {
  const dataDir = temp('sqlite-data');
  folders.push(dataDir);
  const k = await startTestKernel({ only: ['secrets', 'logs'], dataDir, database: 'sqlite', config: 'log_level = "info"\n' });
  try {
    assert.equal(k.kernel.dataHome, dataDir);
    await waitFor(() => existsSync(path.join(k.home, 'logs')), 5_000, 'the log folder in the home');
    assert.equal(readFileSync(path.join(dataDir, 'secret.key')).length, 32, 'the secret key is in the data directory');
    assert.equal(existsSync(path.join(k.home, 'secret.key')), false);
    assert.equal(existsSync(path.join(dataDir, 'logs')), false);
    assert.equal(existsSync(path.join(dataDir, '.talon-fleet')), false, 'SQLite keeps no marker');
  } finally {
    await k.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
