/**
 * `talon init` against a running service: with flags and --yes (nothing asked), and answering its questions from
 * piped stdin. The scripted FakeProvider stands behind OpenAI's URL setting; each run ends with a working default
 * model (a message gets the provider's reply) and, when asked for, a first agent.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';

let fake: FakeProvider;
let k: TestKernel;
// Keys in this machine's environment would make the providers ready without the steps under test.
const saved = { OPENAI_API_KEY: process.env.OPENAI_API_KEY, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY };

before(async () => {
  for (const name of Object.keys(saved)) delete process.env[name];
  fake = new FakeProvider();
  await fake.start();
  k = await startTestKernel({
    only: ['system', 'agents', 'llm-openai', 'catalog', 'config-api', 'templates'],
    config: `[provider_urls]\nopenai = "${fake.url}/v1"\n\n[catalog.detect_urls]\nollama = "http://127.0.0.1:9"\nlmstudio = "http://127.0.0.1:9"\nvllm = "http://127.0.0.1:9"\nllamacpp = "http://127.0.0.1:9"\n`,
  });
});

after(async () => {
  await k?.stop();
  await fake?.stop();
  for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
});

/** Runs `talon init` as a user would (a child process; the service answers from this one), with `input` piped in. */
function init(args: string[], input = '', env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/talon.ts', 'init', '--url', k.url, ...args], { env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  child.stdin.end(input);
  const killer = setTimeout(() => child.kill(), 60_000);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(killer), resolve({ code, out, err }))));
}

const defaultModel = async () => ((await (await k.request('/api/config')).json()) as { default_model: { provider: string; model: string } }).default_model;

test('talon init with flags: key from a variable, tested, default model set, first agent created and answering', { timeout: 90_000 }, async () => {
  const run = await init(['--provider', 'openai', '--key-env', 'INIT_TEST_KEY', '--template', 'translator', '--yes'], '', { INIT_TEST_KEY: 'sk-from-flags' });
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /Stored the key for OpenAI/);
  assert.match(run.out, /OpenAI answers \(\d+ ms\)/);
  assert.match(run.out, /Default model: openai\/fake-model\./);
  const id = /#\/chat\/([0-9a-f-]{36})/.exec(run.out)?.[1];
  assert.ok(id, run.out);
  assert.doesNotMatch(run.out + run.err, /sk-from-flags/, 'the key is never printed');
  assert.deepEqual(await defaultModel(), { provider: 'openai', model: 'fake-model', api_key_env: '', base_url: '' });

  fake.enqueue({ text: 'Bonjour' });
  const reply = await k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'Hello' } });
  assert.equal(reply.status, 200);
  assert.equal(((await reply.json()) as { response: string }).response, 'Bonjour');
  assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-from-flags');
  assert.equal(fake.requests.at(-1)!.body.model, 'fake-model');
});

test('talon init answered from piped stdin: provider by name, the key typed, Enter for the first model, no agent', { timeout: 90_000 }, async () => {
  const run = await init([], 'openai\nsk-typed\n\nnone\n');
  assert.equal(run.code, 0, run.err);
  assert.match(run.out, /Provider \[1\]: /);
  assert.match(run.out, /Default model: openai\/fake-model\./);
  assert.doesNotMatch(run.out, /Agent '/);
  const tested = fake.requests.filter((r) => r.path === '/v1/models').at(-1)!;
  assert.equal(tested.headers.authorization, 'Bearer sk-typed', 'the typed key was stored and tested');
});

test('talon init refuses what it cannot do, in words, with exit code 1', { timeout: 90_000 }, async () => {
  const unknown = await init(['--provider', 'no-such', '--yes']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.err, /talon init: no provider 'no-such'/);
  const noKey = await init(['--provider', 'anthropic', '--yes']);
  assert.equal(noKey.code, 1);
  assert.match(noKey.err, /Anthropic needs a key/);
  const down = await init(['--url', 'http://127.0.0.1:9', '--yes']);
  assert.equal(down.code, 1);
  assert.match(down.err, /the service does not answer at http:\/\/127\.0\.0\.1:9/);
});
