import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startTestKernel } from '@talon/testing';
import { ConfigStore } from '../kernel/config/store.ts';
import { HookBus } from '../kernel/hooks.ts';
import { ConfigError, redactSecrets } from '@talon/module-sdk';

const fixtures = path.resolve('test/fixtures/modules');
const tempHome = () => mkdtempSync(path.join(tmpdir(), 'talon-cfg-'));

function store(text: string): ConfigStore {
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), text);
  return new ConfigStore(path.join(home, 'config.toml'), new HookBus().kernel, { check: () => {}, applied: async () => {} });
}

const claimer = (config: string) => startTestKernel({ modulesDir: fixtures, only: ['claimer', 'configured'], config });

test('an invalid kernel value names the key and the problem', () => {
  // What is allowed, in words, not the pattern that checks it.
  assert.throws(() => store('api_listen = 4545\n').load(), /'api_listen': must be host:port, e\.g\. "127\.0\.0\.1:4545"/);
  assert.throws(
    () => store('api_listen = "localhost"\n').load(),
    /'api_listen': must be host:port, e\.g\. "127\.0\.0\.1:4545", "0\.0\.0\.0:8080" or "\[::1\]:4545" \(a port up to 65535\)$/,
  );
  assert.throws(() => store('log_level = "loud"\n').load(), /'log_level'.*allowed/);
  assert.throws(() => store('[startup]\non_boot_failure = "maybe"\n').load(), /'startup.on_boot_failure'/);
});

test('a TOML syntax error names the line, says what is wrong and what is allowed', () => {
  const says = (text: string, message: RegExp) => assert.throws(() => store(text).load(), message);
  says('log_level = "x\n', /line 1, column \d+: a string is not closed: add its closing quote before the end of the line/);
  says('[default_model]\nmodel = gpt-4o\n', /line 2, column \d+: a text value goes in quotes: model = "gpt-4o"/);
  says('log_level =\n', /'log_level' has no value after '='/);
  says('log_level = "info"\nlog_level = "warn"\n', /line 2, column 1: 'log_level' is set twice in the same table/);
  says('module_paths = ["a", "b"\nlog_level = "info"\n', /line 2, column 1: a list or an inline table is not closed/);
  says('[modules\n', /a table header is not closed: write \[name\]/);
  says('just words\n', /each line is a `key = value`, a `\[table\]` header or a # comment/);
});

test("a module's section names each problem with its key: not a table, a missing key, a value not allowed, its own x-error text", () => {
  const schema = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, mode: { enum: ['a', 'b'] }, token: { type: 'string', minLength: 8, 'x-error': 'use a long token' } },
  } as const;
  const claimed = (text: string) => {
    const s = store(text);
    s.claim('sec', { module: 'm', enabled: true, table: true, schema });
    return s;
  };
  assert.throws(() => claimed('sec = 3\n').load(), /invalid value for 'sec': must be a table \(\[sec\]\)/);
  assert.throws(() => claimed('[sec]\nmode = "c"\n').load(), /missing required key 'sec.name'; invalid value for 'sec.mode': .*\(allowed: "a", "b"\)/);
  assert.throws(() => claimed('[sec]\nname = "x"\ntoken = "short"\n').load(), /invalid value for 'sec.token': use a long token$/);
  claimed('[sec]\nname = "x"\n').load();
});

test('a top-level key written after a table is a warning that names the fix', () => {
  const s = store('[modules]\ndisabled = []\nmodule_paths = ["/x"]\n');
  s.load();
  const warnings = s.revalidate();
  assert.ok(
    warnings.some((w) => w.includes("'modules.module_paths'") && /top-level key — move it above the first \[table\]/.test(w)),
    warnings.join('\n'),
  );
});

test('keys claimed by a module are validated with its schema, get defaults, and reach only that module', async () => {
  const k = await claimer('greeting_word = "hey"\n');
  try {
    assert.deepEqual(await (await k.request('/api/claimer')).json(), { word: 'hey', per_minute: 60 });
    assert.equal(k.kernel.moduleConfig(k.kernel.manifest('configured')!).greeting_word, undefined);
  } finally {
    await k.stop();
  }
  await assert.rejects(claimer('greeting_word = ""\n'), (err: Error) => err instanceof ConfigError && /'greeting_word'/.test(err.message));
  await assert.rejects(claimer('[limits]\nper_minute = 0\n'), (err: Error) => err instanceof ConfigError && /'limits.per_minute'/.test(err.message));
});

test("a module's other accepted spellings are rewritten to its keys", async () => {
  const k = await claimer('greeting = "yo"\n');
  try {
    assert.deepEqual(await (await k.request('/api/claimer')).json(), { word: 'yo', per_minute: 60 });
  } finally {
    await k.stop();
  }
});

test('unknown keys are warnings naming them, not errors', async () => {
  const k = await claimer('log_level = "warn"\nmystery = 1\n[configured]\nextra = true\n');
  try {
    const logs = k.logLines().join('');
    assert.match(logs, /unknown configuration key 'mystery'/);
    assert.match(logs, /unknown configuration key 'configured.extra'/);
    assert.deepEqual(await (await k.request('/api/configured')).json(), { level: 3 });
  } finally {
    await k.stop();
  }
});

test('an invalid value in a module section stops start-up', async () => {
  await assert.rejects(
    startTestKernel({ modulesDir: fixtures, only: ['configured'], config: '[configured]\nlevel = 9\n' }),
    (err: Error) => err instanceof ConfigError && /'configured.level': must be <= 5/.test(err.message),
  );
});

test('the configuration API validates a whole candidate and applies it, firing config.changed', async () => {
  const k = await claimer('');
  try {
    const seen: unknown[] = [];
    k.kernel.hooks.kernel.config.changed.tapPromise('test', async (change) => void seen.push(change));
    const raw = { ...k.kernel.config.raw(), greeting_word: 'howdy' };
    assert.deepEqual(k.kernel.config.check(raw), []);
    const result = await k.kernel.config.apply(raw, 'greeting_word');
    assert.deepEqual(result, { changed: ['greeting_word'], restartRequired: false });
    assert.deepEqual(seen, [{ path: 'greeting_word', value: 'howdy', previous: 'hi' }]);
    assert.deepEqual(await (await k.request('/api/claimer')).json(), { word: 'howdy', per_minute: 60 });
    assert.throws(() => k.kernel.config.check({ greeting_word: 5 }), /'greeting_word': must be string/);
    await assert.rejects(k.kernel.config.apply({ greeting_word: 5 }, 'greeting_word'), ConfigError);
    assert.deepEqual(await (await k.request('/api/claimer')).json(), { word: 'howdy', per_minute: 60 }, 'a refused change changes nothing');
    assert.equal((await k.kernel.config.apply({ ...raw, api_listen: '127.0.0.1:9' }, 'api_listen')).restartRequired, true);
  } finally {
    await k.stop();
  }
});

test('the CLI exits with code 2 and a message naming the key on a bad config', () => {
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), 'api_listen = "nowhere"\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    env: { ...process.env, TALON_HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  rmSync(home, { recursive: true, force: true });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /'api_listen'/);
});

test('secrets are redacted, variable names are not', () => {
  const out = redactSecrets({ api_key: 'sk-1', default_model: { api_key_env: 'OPENAI_API_KEY' }, channels: { bot_token: 'abc', empty_token: '' } });
  assert.deepEqual(out, { api_key: '<redacted>', default_model: { api_key_env: 'OPENAI_API_KEY' }, channels: { bot_token: '<redacted>', empty_token: '' } });
});

test('a value under any secret-like key is redacted in log lines, at any depth', async () => {
  const k = await startTestKernel({ modulesDir: fixtures, only: ['alpha'], config: 'log_level = "info"\n' });
  const secret = 'sk-very-secret-value-1234';
  k.kernel.log.info(
    { config: { api_key: secret }, channel: { bot_token: 'tok-123456', nested: { db_password: 'pw-987654' } }, api_key_env: 'SOME_VAR' },
    'on purpose',
  );
  k.kernel.log.error({ err: new Error('still an error') }, 'an error line');
  await k.stop();
  const logs = k.logLines().join('');
  assert.ok(!logs.includes(secret) && !logs.includes('tok-123456') && !logs.includes('pw-987654'));
  assert.match(logs, /SOME_VAR/);
  assert.match(logs, /still an error/);
});

test('the CLI exits with code 1 and a plain message when api_listen is taken', async () => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  const port = (blocker.address() as { port: number }).port;
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), `api_listen = "127.0.0.1:${port}"\nlog_level = "silent"\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/talon.ts'], {
    env: { ...process.env, TALON_HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  blocker.close();
  rmSync(home, { recursive: true, force: true });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /cannot listen on 127\.0\.0\.1:\d+ .*EADDRINUSE.*config\.toml, TALON_API_LISTEN or --listen/);
});

test('the CLI: --listen overrides api_listen and a bad value exits 2 naming --listen', async () => {
  const home = tempHome();
  writeFileSync(path.join(home, 'config.toml'), 'api_listen = "127.0.0.1:1"\nlog_level = "silent"\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/talon.ts', '--listen', 'not-an-address'], {
    env: { ...process.env, TALON_HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  rmSync(home, { recursive: true, force: true });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /invalid value for '--listen': 'not-an-address' is not host:port/);
});
