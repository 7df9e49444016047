import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startTestKernel } from '@talon/module-sdk/testing';
import { ConfigError } from '../kernel/config/errors.ts';
import { ConfigStore } from '../kernel/config/store.ts';
import { persistValue } from '../kernel/config/file.ts';
import { redactSecrets } from '../kernel/config/redact.ts';

const fixtures = path.resolve('test/fixtures/modules');
const tempHome = () => mkdtempSync(path.join(tmpdir(), 'talon-cfg-'));

function store(text: string): ConfigStore {
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), text);
  return new ConfigStore(path.join(home, 'config.toml'));
}

test('first start writes a commented default config file', async () => {
  const home = tempHome();
  const s = new ConfigStore(path.join(home, 'config.toml'));
  s.load();
  const text = readFileSync(path.join(home, 'config.toml'), 'utf8');
  assert.match(text, /^# Talon configuration/);
  assert.match(text, /# api_listen = "127.0.0.1:4545"/);
  assert.equal(s.settings().api_listen, '127.0.0.1:4545');
  rmSync(home, { recursive: true, force: true });
});

test('an invalid value names the key and the problem', () => {
  const s = store('rate_limit_per_second = -1\n');
  assert.throws(
    () => s.load(),
    (err: Error) => err instanceof ConfigError && /'rate_limit_per_second'/.test(err.message) && /must be > 0/.test(err.message),
  );
});

test('a wrong type and a bad enum are errors naming the key', () => {
  assert.throws(() => store('api_listen = 4545\n').load(), /'api_listen': must be string/);
  assert.throws(() => store('log_level = "loud"\n').load(), /'log_level'.*allowed/);
  assert.throws(() => store('[default_model]\nprovider = 1\n').load(), /'default_model.provider'/);
});

test('a TOML syntax error names the line', () => {
  assert.throws(() => store('api_key = "x\n').load(), /line 1/);
});

test('unknown keys are warnings naming them, not errors', () => {
  const s = store('mystery = 1\n[default_model]\nflavour = "x"\n');
  const warnings = s.load();
  assert.ok(warnings.some((w) => w.includes("'mystery'")));
  assert.ok(warnings.some((w) => w.includes("'default_model.flavour'")));
});

test("the reference system's spellings are accepted", () => {
  const s = store('cors_origin = ["http://a.test"]\n[rate_limit]\napi_requests_per_minute = 600\n');
  s.load();
  assert.deepEqual(s.settings().cors_origins, ['http://a.test']);
  assert.equal(s.settings().rate_limit_per_second, 10);
});

test('an invalid value in a module section stops start-up', async () => {
  await assert.rejects(
    startTestKernel({ modulesDir: fixtures, only: ['configured'], config: '[configured]\nlevel = 9\n' }),
    (err: Error) => err instanceof ConfigError && /'configured.level': must be <= 5/.test(err.message),
  );
});

test('a module section gets its defaults and an unknown module key warns', async () => {
  const k = await startTestKernel({ modulesDir: fixtures, only: ['configured'], config: 'log_level = "warn"\n[configured]\nextra = true\n' });
  try {
    assert.deepEqual(await (await k.request('/api/configured')).json(), { level: 3 });
    await k.kernel.stop();
    const logs = readdirSync(path.join(k.home, 'logs'))
      .map((f) => readFileSync(path.join(k.home, 'logs', f), 'utf8'))
      .join('');
    assert.match(logs, /unknown configuration key 'configured.extra'/);
  } finally {
    await k.stop();
  }
});

test('the CLI exits with code 2 and a message naming the key on a bad config', () => {
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), 'api_listen = "nowhere"\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'kernel/main.ts'], {
    env: { ...process.env, TALON_HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  rmSync(home, { recursive: true, force: true });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /'api_listen'/);
});

test('a value set at run time is persisted into the file, keeping comments', () => {
  const home = tempHome();
  const file = path.join(home, 'config.toml');
  writeFileSync(file, '# my comment\napi_key = ""\n\n[default_model]\n# which model\nmodel = "a"\n');
  persistValue(file, ['default_model', 'model'], 'b');
  persistValue(file, ['rate_limit_per_second'], 50);
  persistValue(file, ['provider_urls', 'ollama'], 'http://127.0.0.1:11434');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /# my comment/);
  assert.match(text, /# which model\nmodel = "b"/);
  assert.match(text, /rate_limit_per_second = 50/);
  const s = new ConfigStore(file);
  s.load();
  assert.equal(s.settings().default_model.model, 'b');
  assert.equal(s.settings().provider_urls.ollama, 'http://127.0.0.1:11434');
  rmSync(home, { recursive: true, force: true });
});

test('secrets are redacted, variable names are not', () => {
  const out = redactSecrets({ api_key: 'sk-1', default_model: { api_key_env: 'OPENAI_API_KEY' }, channels: { bot_token: 'abc', empty_token: '' } });
  assert.deepEqual(out, { api_key: '<redacted>', default_model: { api_key_env: 'OPENAI_API_KEY' }, channels: { bot_token: '<redacted>', empty_token: '' } });
});

test('a secret in the config never reaches a log line', async () => {
  const secret = 'sk-very-secret-value-1234';
  const k = await startTestKernel({ only: ['system'], config: `log_level = "trace"\napi_key = "${secret}"\n` });
  await k.request('/api/health', { headers: { authorization: `Bearer ${secret}` } });
  k.kernel.log.info({ config: k.kernel.config.effective() }, 'dumping config on purpose');
  await k.kernel.stop();
  const dir = path.join(k.home, 'logs');
  assert.ok(existsSync(dir));
  const logs = readdirSync(dir)
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('');
  assert.ok(logs.length > 0);
  assert.ok(!logs.includes(secret), 'the api_key value appears in the log');
  await k.stop();
});

test('a value under any secret-like key is redacted in log lines, at any depth', async () => {
  const k = await startTestKernel({ only: ['system'], config: 'log_level = "info"\n' });
  k.kernel.log.info({ channel: { bot_token: 'tok-123456', nested: { db_password: 'pw-987654' } }, api_key_env: 'SOME_VAR' }, 'secrets on purpose');
  k.kernel.log.error({ err: new Error('still an error') }, 'an error line');
  await k.kernel.stop();
  const dir = path.join(k.home, 'logs');
  const logs = readdirSync(dir)
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('');
  assert.ok(!logs.includes('tok-123456') && !logs.includes('pw-987654'));
  assert.match(logs, /SOME_VAR/);
  assert.match(logs, /still an error/);
  await k.stop();
});

test('the CLI exits with code 1 and a plain message when api_listen is taken', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  const port = (blocker.address() as { port: number }).port;
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "silent"\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'kernel/main.ts'], {
    env: { ...process.env, TALON_HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  blocker.close();
  rmSync(home, { recursive: true, force: true });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /cannot listen on api_listen .*EADDRINUSE/);
});
