/** Every plugin endpoint: success shapes and error answers. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { gitHttpServer } from '@talon/testing';
import { json, pluginToml, startEnv, stopEnv, writePlugin, type Env } from './helpers.ts';

const hook = `#!/usr/bin/env bash\ncat >/dev/null\necho '{"type":"ingest_result","memories":[{"content":"hi"}]}'\n`;
const files = (name: string, extra = '', settings = '') => ({
  'plugin.toml': pluginToml(name, { ingest: 'hooks/ingest.sh' }, settings, extra),
  'hooks/ingest.sh': hook,
});

let env: Env;
let registry: string;
let git: { url: string; close(): Promise<void> };
before(async () => {
  registry = mkdtempSync(path.join(tmpdir(), 'plugins-reg-'));
  writePlugin(path.join(registry, 'plugins'), 'from-registry', files('from-registry'));
  const work = mkdtempSync(path.join(tmpdir(), 'plugins-git-work-'));
  writePlugin(path.join(work, 'nested'), 'from-git', files('from-git'));
  const g = (...args: string[]) => execFileSync('git', args, { cwd: work, stdio: 'ignore' });
  g('init', '-q');
  g('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'add', '.');
  g('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '-m', 'plugin');
  const root = mkdtempSync(path.join(tmpdir(), 'plugins-git-root-'));
  execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, 'repo.git')]);
  git = await gitHttpServer(root);
  env = await startEnv({
    extra: `[hub]\nregistry_url = "${registry}"\nallow_hosts = ["127.0.0.1"]\n[plugins]\nlaunchers = { v = "talon-no-such-launcher" }\n`,
    plugins: {
      plain: files('plain', '[env]\nAPI_TOKEN = "tok-123"\nMODE = "fast"\n'),
      broken: { 'plugin.toml': pluginToml('broken', { ingest: 'hooks/missing.sh', bogus: 'hooks/x.sh' }) },
      signme: files('signme'),
    },
  });
});
after(async () => {
  await stopEnv(env);
  await git.close();
});

const post = (p: string, body?: unknown) => env.k.request(p, { method: 'POST', json: body ?? {} });
const error = async (res: Response) => (await json<{ error: string }>(res)).error;

test('GET /api/plugins and /api/plugins/{name}: loaded and broken plugins; 404 names the plugin', async () => {
  const list = await json<{ plugins: Array<{ name: string; status: string; hooks_valid: boolean; error: string | null }>; total: number }>(
    await env.k.request('/api/plugins'),
  );
  const by = Object.fromEntries(list.plugins.map((p) => [p.name, p]));
  assert.equal(by.plain.status, 'loaded');
  assert.equal(by.plain.hooks_valid, true);
  assert.equal(by.broken.status, 'error');
  assert.match(by.broken.error ?? '', /bogus is not a hook/);
  const detail = await json<{ runtime: string; runtime_available: boolean; env_keys: string[] }>(await env.k.request('/api/plugins/plain'));
  assert.equal(detail.runtime, 'bash');
  assert.equal(detail.runtime_available, true);
  assert.deepEqual(detail.env_keys, ['API_TOKEN', 'MODE']);
  const missing = await env.k.request('/api/plugins/nope');
  assert.equal(missing.status, 404);
  assert.match(await error(missing), /plugin 'nope' not found/);
});

test('install from a local folder, the registry and git; 409 when present; bad sources refused', async () => {
  const src = path.join(env.home, 'src');
  writePlugin(src, 'local-one', files('local-one'));
  const res = await post('/api/plugins/install', { source: 'local', path: path.join(src, 'local-one') });
  assert.equal(res.status, 201, await res.clone().text());
  assert.deepEqual(Object.keys(await json(res)).sort(), ['hooks_valid', 'installed', 'name', 'path', 'restart_required', 'status', 'version']);
  assert.equal((await post('/api/plugins/install', { path: path.join(src, 'local-one') })).status, 409);

  assert.equal((await post('/api/plugins/install', { source: 'registry', name: 'from-registry' })).status, 201);
  const regs = await json<{ registries: Array<{ name: string; plugins: Array<{ name: string; installed: boolean }> }> }>(
    await env.k.request('/api/plugins/registries'),
  );
  assert.equal(regs.registries[0].plugins.find((p) => p.name === 'from-registry')?.installed, true);
  assert.equal((await post('/api/plugins/install', { source: 'registry', name: 'not-there' })).status, 404);

  const viaGit = await post('/api/plugins/install', { source: 'git', url: `${git.url}/repo.git`, subdir: 'nested/from-git' });
  assert.equal(viaGit.status, 201, await viaGit.clone().text());
  assert.equal((await json<{ name: string }>(viaGit)).name, 'from-git');
  assert.equal((await post('/api/plugins/install', { source: 'git', url: `${git.url}/repo.git` })).status, 400, 'no plugin.toml at the root');
  assert.equal((await post('/api/plugins/install', { source: 'git', url: 'ftp://example.com/x.git' })).status, 400);

  writePlugin(src, 'linky', files('linky'));
  symlinkSync('/etc/passwd', path.join(src, 'linky', 'passwd'));
  writePlugin(src, 'tampered', files('tampered', '[integrity]\n"hooks/ingest.sh" = "0000000000000000000000000000000000000000000000000000000000000000"\n'));
  writePlugin(src, 'holey', { 'plugin.toml': pluginToml('holey', { ingest: 'hooks/none.sh' }) });
  writePlugin(src, 'escape', { 'plugin.toml': pluginToml('escape', { ingest: '../../etc/passwd' }) });
  writePlugin(src, 'bad-toml', { 'plugin.toml': 'name = "bad-toml"\n[hooks\n' });
  const outside = writePlugin(mkdtempSync('/tmp/plugins-out-'), 'outside', files('outside'));
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ path: path.join(src, 'linky') }, 400, /symbolic link/],
    [{ path: path.join(src, 'tampered') }, 403, /integrity\] mismatch/],
    [{ path: path.join(src, 'holey') }, 400, /does not exist/],
    [{ path: path.join(src, 'escape') }, 400, /not inside the plugin folder/],
    [{ path: path.join(src, 'bad-toml') }, 400, /does not parse/],
    [{ path: outside }, 403, /outside the folders/],
    [{ path: 'relative' }, 400, /absolute/],
    [{ path: path.join(src, 'nothing') }, 404, /no plugin folder/],
    [{ source: 'registry' }, 400, /needs 'name'/],
    [{ source: 'local' }, 400, /needs 'path'/],
    [{ source: 'git' }, 400, /needs 'url'/],
    [{ source: 'cloud' }, 400, /source/],
  ];
  for (const [body, status, pattern] of cases) {
    const r = await post('/api/plugins/install', body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.match(await error(r), pattern, JSON.stringify(body));
  }
  assert.equal(existsSync(path.join(env.home, 'plugins', 'tampered')), false, 'nothing of a refused plugin lands');
});

test('POST /api/plugins/uninstall removes the folder; 404 for an unknown name; 400 without a name', async () => {
  const res = await post('/api/plugins/uninstall', { name: 'local-one' });
  assert.deepEqual(await json(res), { removed: true, name: 'local-one' });
  assert.equal(existsSync(path.join(env.home, 'plugins', 'local-one')), false);
  assert.equal((await post('/api/plugins/uninstall', { name: 'local-one' })).status, 404);
  assert.equal((await post('/api/plugins/uninstall', {})).status, 400);
});

test('scaffold writes a plugin for a runtime (201), 409 when it exists, 400 for a bad name or runtime', async () => {
  const res = await post('/api/plugins/scaffold', { name: 'fresh', description: 'A fresh plugin', runtime: 'node' });
  assert.equal(res.status, 201);
  const body = await json<{ files: string[]; status: string }>(res);
  assert.ok(body.files.includes('hooks/ingest.js') && body.files.includes('hooks/merge_subagent.js') && body.files.includes('README.md'));
  assert.equal(body.status, 'loaded');
  assert.equal((await post('/api/plugins/scaffold', { name: 'fresh', runtime: 'node' })).status, 409);
  assert.equal((await post('/api/plugins/scaffold', { name: 'bad name!', runtime: 'node' })).status, 400);
  assert.equal((await post('/api/plugins/scaffold', { name: 'x', runtime: 'cobol' })).status, 400);
  assert.equal((await post('/api/plugins/scaffold', { runtime: 'node' })).status, 400);
});

test('doctor lists the eleven runtimes and each plugin', async () => {
  const d = await json<{
    runtimes: Array<{ runtime: string; available: boolean; version: string | null; install_hint: string; problem: string | null }>;
    plugins: Array<{ name: string; runtime_available: boolean; hooks_valid: boolean }>;
  }>(await env.k.request('/api/plugins/doctor'));
  assert.deepEqual(
    d.runtimes.map((r) => r.runtime),
    ['python', 'native', 'v', 'node', 'deno', 'go', 'ruby', 'bash', 'bun', 'php', 'lua'],
  );
  const node = d.runtimes.find((r) => r.runtime === 'node')!;
  assert.equal(node.available, true);
  assert.match(node.version ?? '', /^v\d+/);
  assert.equal(node.problem, null);
  const v = d.runtimes.find((r) => r.runtime === 'v')!;
  assert.deepEqual([v.available, v.problem], [false, "'talon-no-such-launcher' is not on PATH"]);
  assert.ok(d.runtimes.every((r) => r.install_hint.length > 0));
  assert.equal(d.plugins.find((p) => p.name === 'broken')?.hooks_valid, false);
});

test('status, health, env (secret values redacted), export (tar.gz), lint (200 / 422)', async () => {
  const status = await json<{ status: string; active: boolean; stack_position: number | null; runtime_available: boolean }>(
    await env.k.request('/api/plugins/plain/status'),
  );
  assert.deepEqual([status.status, status.active, status.stack_position, status.runtime_available], ['loaded', false, null, true]);
  const health = await json<{ plugin: string; hook_stats: object; recent_traces: unknown[] }>(await env.k.request('/api/plugins/plain/health'));
  assert.equal(health.plugin, 'plain');
  assert.deepEqual(health.recent_traces, []);
  const e = await json<{ env: Record<string, string> }>(await env.k.request('/api/plugins/plain/env'));
  assert.deepEqual(e.env, { API_TOKEN: '<redacted>', MODE: 'fast' });

  const exported = await env.k.request('/api/plugins/plain/export');
  assert.equal(exported.headers.get('content-type'), 'application/gzip');
  assert.match(exported.headers.get('content-disposition') ?? '', /plain\.tar\.gz/);
  const names: string[] = [];
  const x = extract();
  x.on('entry', (h, stream, next) => {
    names.push(h.name);
    stream.on('end', next);
    stream.resume();
  });
  const done = new Promise<void>((r) => x.on('finish', () => r()));
  x.end(gunzipSync(Buffer.from(await exported.arrayBuffer())));
  await done;
  assert.deepEqual(names.sort(), ['plain/hooks/ingest.sh', 'plain/plugin.toml']);

  const good = await env.k.request('/api/plugins/plain/lint');
  assert.equal(good.status, 200);
  const g = await json<{ ok: boolean; warnings: string[] }>(good);
  assert.equal(g.ok, true);
  assert.ok(g.warnings.some((w) => /neither hashed in \[integrity\] nor signed/.test(w)));
  const bad = await env.k.request('/api/plugins/broken/lint');
  assert.equal(bad.status, 422);
  const b = await json<{ ok: boolean; errors: string[] }>(bad);
  assert.equal(b.ok, false);
  assert.ok(b.errors.some((x) => /missing\.sh' does not exist/.test(x)));
  assert.ok(b.errors.some((x) => /bogus is not a hook/.test(x)));
});

test('enable turns a plugin off and on; reload reads it again', async () => {
  const off = await json<{ enabled: boolean; status: string }>(await post('/api/plugins/plain/enable', { enabled: false }));
  assert.deepEqual([off.enabled, off.status], [false, 'disabled']);
  assert.ok(existsSync(path.join(env.home, 'plugins', 'plain', '.disabled')));
  const on = await json<{ enabled: boolean; status: string }>(await post('/api/plugins/plain/enable'));
  assert.deepEqual([on.enabled, on.status], [true, 'loaded']);
  writeFileSync(path.join(env.home, 'plugins', 'plain', 'plugin.toml'), pluginToml('plain', { ingest: 'hooks/ingest.sh' }).replace('1.0.0', '1.1.0'));
  const reloaded = await json<{ version: string; processes_evicted: number }>(await post('/api/plugins/plain/reload'));
  assert.equal(reloaded.version, '1.1.0');
  assert.equal(reloaded.processes_evicted, 0);
  assert.equal((await post('/api/plugins/plain/enable', { enabled: 'yes' })).status, 400);
});

test('sign writes an Ed25519 envelope over plugin.toml and the hooks; a changed hook then fails the load until signed again', async () => {
  const res = await post('/api/plugins/signme/sign');
  assert.equal(res.status, 200);
  const body = await json<{ signed: boolean; count: number; hashes: Record<string, string>; status: string }>(res);
  assert.equal(body.signed, true);
  assert.deepEqual(Object.keys(body.hashes).sort(), ['hooks/ingest.sh', 'plugin.toml']);
  const envelope = JSON.parse(readFileSync(path.join(env.home, 'plugins', 'signme', 'SIGNATURE.json'), 'utf8')) as { kind: string; signature: string };
  assert.equal(envelope.kind, 'plugin');
  writeFileSync(path.join(env.home, 'plugins', 'signme', 'hooks', 'ingest.sh'), `${hook}# changed\n`);
  const after = await json<{ status: string; error: string }>(await post('/api/plugins/signme/reload'));
  assert.equal(after.status, 'error');
  assert.match(after.error, /signature check failed: content hash mismatch/);
  assert.equal((await json<{ status: string }>(await post('/api/plugins/signme/sign'))).status, 'loaded');
  const unsignable = await post('/api/plugins/broken/sign');
  assert.equal(unsignable.status, 400);
});

test('install-deps: nothing to install without a dependency file; requirements.txt goes through pip into .deps; a pip failure is reported', async () => {
  const none = await json<{ status: string }>(await post('/api/plugins/plain/install-deps'));
  assert.equal(none.status, 'nothing_to_install');
  writeFileSync(path.join(env.home, 'plugins', 'plain', 'requirements.txt'), 'requests==2.0\n');
  const bin = mkdtempSync(path.join(tmpdir(), 'plugins-bin-'));
  const log = path.join(bin, 'args');
  // A stand-in python3 that records how pip was asked to run.
  writeFileSync(path.join(bin, 'python3'), `#!/bin/sh\necho "$@" > ${log}\n`);
  chmodSync(path.join(bin, 'python3'), 0o755);
  const old = process.env.PATH;
  process.env.PATH = `${bin}:${old}`;
  try {
    const r = await json<{ status: string; file: string; command: string }>(await post('/api/plugins/plain/install-deps'));
    assert.equal(r.status, 'installed');
    assert.equal(r.file, 'requirements.txt');
    // pip failing (an index that cannot be reached, a package that does not exist) is an outcome, not a 5xx.
    writeFileSync(path.join(bin, 'python3'), `#!/bin/sh\necho "ERROR: No matching distribution found for requests==2.0" >&2\nexit 1\n`);
    const failed = await post('/api/plugins/plain/install-deps');
    assert.equal(failed.status, 200);
    const f = await json<{ status: string; message: string }>(failed);
    assert.equal(f.status, 'error');
    assert.match(f.message, /exit code 1: ERROR: No matching distribution/);
  } finally {
    process.env.PATH = old;
  }
  assert.match(readFileSync(log, 'utf8'), /^-m pip install --quiet --disable-pip-version-check --target \S+\/plain\/\.deps -r \S+\/plain\/requirements\.txt/);
});

test('every per-plugin endpoint answers 404 for an unknown plugin', async () => {
  for (const [method, suffix] of [
    ['POST', 'install-deps'],
    ['GET', 'status'],
    ['GET', 'health'],
    ['GET', 'env'],
    ['GET', 'export'],
    ['GET', 'lint'],
    ['POST', 'enable'],
    ['POST', 'reload'],
    ['POST', 'sign'],
  ]) {
    const r = await env.k.request(`/api/plugins/ghost/${suffix}`, {
      method,
      ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '' } : {}),
    });
    assert.equal(r.status, 404, `${method} ${suffix}`);
  }
  assert.equal((await post('/api/plugins/prewarm', { plugins: 'all' })).status, 400);
});
