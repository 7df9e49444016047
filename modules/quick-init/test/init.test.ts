import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
const saved: Record<string, string | undefined> = {};

before(async () => {
  k = await startTestKernel({ only: ['quick-init', 'catalog', 'llm', 'error-envelope'] });
});
after(async () => {
  delete process.env.ELEVENLABS_API_KEY;
  Object.assign(process.env, saved);
  await k?.stop();
});

const init = async () => {
  const res = await k.request('/api/init', { method: 'POST' });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
};

test('without any provider key in the environment: 409 naming the variables, nothing written', async () => {
  for (const name of Object.keys(process.env).filter((n) => /_API_KEY$|_KEY$|_TOKEN$/.test(n))) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
  const before = readFileSync(path.join(k.home, 'config.toml'), 'utf8');
  const res = await init();
  assert.equal(res.status, 409);
  assert.match(res.body.error, /OPENAI_API_KEY|_API_KEY/);
  assert.equal(readFileSync(path.join(k.home, 'config.toml'), 'utf8'), before);
});

test('with a key: writes [default_model] for that provider and adopts it; a second call says it is already initialised', async () => {
  process.env.OPENAI_API_KEY = 'sk-test-quick-init';
  // A media-only provider (no chat models) comes first by name and is passed over, not answered 409.
  process.env.ELEVENLABS_API_KEY = 'el-test-quick-init';
  const res = await init();
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'initialized');
  assert.equal(res.body.provider, 'openai');
  assert.ok(res.body.model);
  const file = readFileSync(path.join(k.home, 'config.toml'), 'utf8');
  assert.match(file, /\[default_model\]\nprovider = "openai"/);
  assert.ok(!file.includes('sk-test-quick-init'), 'the key itself is never written');
  const again = await init();
  assert.equal(again.status, 200);
  assert.equal(again.body.status, 'already_initialized');
});
