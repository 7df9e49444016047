/**
 * With the real agent loop: a turn recalls memories into the system prompt,
 * offers memory_search, and is memorized afterwards through a metered LLM call.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/module-sdk/testing';
import { FakeProvider } from '@talon/module-sdk/testing';
import { json } from './helpers.ts';

let fake: FakeProvider;
let k: TestKernel;

before(async () => {
  process.env.TALON_MEMORY_E2E_KEY = 'sk-test';
  fake = new FakeProvider();
  await fake.start();
  k = await startTestKernel({
    only: ['agents', 'memory', 'llm-openai', 'error-envelope'],
    config: `[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "TALON_MEMORY_E2E_KEY"\n[llm]\nmax_retries = 0\n`,
  });
});

after(async () => {
  await k.stop();
  await fake.stop();
});

const manifest = `name = "chef"\n\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are a chef."\n\n[capabilities]\ntools = ["*"]\n`;

test('a turn recalls, offers memory_search, and memorizes', async () => {
  const spawned = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(spawned.status, 201);
  const { agent_id } = await json<{ agent_id: string }>(spawned);
  const seeded = await k.request('/api/memory', { method: 'POST', json: { content: 'The user is vegetarian and avoids fish.', agent_id, level: 'user' } });
  assert.equal(seeded.status, 201);

  const extraction = {
    memories: [{ content: 'The user is cooking for six guests on Saturday.', level: 'session', category: 'project_context' }],
    relations: [],
  };
  fake.enqueue({ text: 'Try a lentil curry.' }, { text: JSON.stringify(extraction) });
  const before = fake.requests.length;
  const reply = await k.request(`/api/agents/${agent_id}/message`, {
    method: 'POST',
    json: { message: 'Suggest a vegetarian dinner for six guests on Saturday' },
  });
  assert.equal(reply.status, 200);
  assert.equal((await json<{ response: string }>(reply)).response, 'Try a lentil curry.');

  const turnCall = fake.requests[before].body as { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
  const system = JSON.stringify(turnCall.messages[0]);
  assert.match(system, /Relevant memories/);
  assert.match(system, /The user is vegetarian and avoids fish\./);
  assert.ok(turnCall.tools?.some((t) => t.function.name === 'memory_search'));

  let count = 0;
  for (let i = 0; i < 200 && count < 2; i++) {
    count = (await json<{ count: number }>(await k.request(`/api/memory/agents/${agent_id}/count`))).count;
    if (count < 2) await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(count, 2);
  const extractionCall = fake.requests[before + 1].body as { messages: Array<{ content: unknown }> };
  assert.match(JSON.stringify(extractionCall.messages), /six guests on Saturday/);
  const listed = await json<{ memories: Array<{ content: string; level: string; session_id: string | null }> }>(
    await k.request(`/api/memory/agents/${agent_id}?level=session`),
  );
  assert.equal(listed.memories[0].content, 'The user is cooking for six guests on Saturday.');
  assert.ok(listed.memories[0].session_id);
});
