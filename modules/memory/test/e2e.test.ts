/**
 * With the real agent loop and usage metering: a turn recalls memories into
 * the system prompt and offers memory_search; afterwards its facts are
 * memorized — by rules with no LLM call (the default), or with extraction =
 * "llm" by one background call that usage meters with its purpose and that
 * budgets and token quotas may refuse.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';
import { json } from './helpers.ts';

type Sent = { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
type PurposeRow = { purpose: string | null; input_tokens: number; output_tokens: number; request_count: number };

interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

async function startEnv(memoryConfig = ''): Promise<Env> {
  const k = await startAgentTestKernel({
    only: ['agents', 'memory', 'usage', 'error-envelope'],
    // Warnings go to the log file, where refused background calls are looked for.
    config: ['log_level = "warn"', '[memory]', memoryConfig].join('\n'),
  });
  return { fake: k.fake, k };
}

async function stopEnv(env: Env): Promise<void> {
  await env.k.stop();
}

async function spawn(k: TestKernel, name: string, capabilities = 'tools = ["*"]'): Promise<string> {
  const manifest = `name = "${name}"\n\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n\n[capabilities]\n${capabilities}\n`;
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  assert.equal(res.status, 201, await res.clone().text());
  return (await json<{ agent_id: string }>(res)).agent_id;
}

/** One turn, blocking or streamed (read to its end). */
async function turn(k: TestKernel, agentId: string, message: string, streamed = false): Promise<void> {
  const res = await k.request(`/api/agents/${agentId}/message${streamed ? '/stream' : ''}`, { method: 'POST', json: { message } });
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.text();
  if (streamed) assert.match(body, /event: done/);
}

const chatCalls = (fake: FakeProvider) => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

async function memoryCount(k: TestKernel, agentId: string): Promise<number> {
  return (await json<{ count: number }>(await k.request(`/api/memory/agents/${agentId}/count`))).count;
}

async function byPurpose(k: TestKernel): Promise<PurposeRow[]> {
  return (await json<{ by_purpose: PurposeRow[] }>(await k.request('/api/usage?period=hour'))).by_purpose;
}

/** Whether `check` holds within `ms` (the caller asserts it with its own message). */
const until = (check: () => Promise<boolean>, ms = 3000): Promise<boolean> =>
  waitFor(check, ms).then(
    () => true,
    () => false,
  );

describe('with nothing configured (extraction = "rules")', () => {
  let env: Env;
  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  test('a turn recalls, offers memory_search, and memorizes the facts the user states without an LLM call', async () => {
    const agentId = await spawn(env.k, 'chef');
    const seeded = await env.k.request('/api/memory', {
      method: 'POST',
      json: { content: 'The user is vegetarian and avoids fish.', agent_id: agentId, level: 'user' },
    });
    assert.equal(seeded.status, 201);
    env.fake.enqueue({ text: 'Try a lentil curry.' });
    const before = env.fake.requests.length;
    await turn(env.k, agentId, 'Suggest a vegetarian dinner. I live in Lyon and I prefer dishes without mushrooms.');

    const turnCall = env.fake.requests[before].body as Sent;
    const system = JSON.stringify(turnCall.messages[0]);
    assert.match(system, /Relevant memories/);
    assert.match(system, /The user is vegetarian and avoids fish\./);
    assert.ok(turnCall.tools?.some((t) => t.function.name === 'memory_search'));

    assert.ok(await until(async () => (await memoryCount(env.k, agentId)) === 3), 'the two facts were stored');
    const listed = await json<{ memories: Array<{ content: string; source: string }> }>(await env.k.request(`/api/memory/agents/${agentId}?level=user`));
    assert.deepEqual(listed.memories.map((m) => m.content).sort(), [
      'The user is vegetarian and avoids fish.',
      'The user lives in Lyon.',
      'The user prefers dishes without mushrooms.',
    ]);
    assert.equal(env.fake.requests.length, before + 1, 'the turn was the only provider call');
  });

  test('N blocking and N streamed turns make exactly 2N provider calls, all metered as turns', async () => {
    const agentId = await spawn(env.k, 'counter');
    const usageBefore = (await byPurpose(env.k)).find((r) => r.purpose === 'turn')?.request_count ?? 0;
    const callsBefore = chatCalls(env.fake);
    const N = 4;
    const facts = ['Ada', 'Grace', 'Edsger', 'Barbara', 'Alan', 'Donald', 'Niklaus', 'Tony'];
    for (let i = 0; i < 2 * N; i++) await turn(env.k, agentId, `Hello! Remember that ${facts[i]} is on the team.`, i >= N);
    // Each turn's facts are stored after the turn; once all are there, every background step has run.
    const memorized = await until(async () => (await memoryCount(env.k, agentId)) === 2 * N);
    assert.equal(chatCalls(env.fake) - callsBefore, 2 * N, 'one provider call per turn, none in the background');
    assert.ok(memorized, 'every turn was memorized (by rules)');
    const rows = await byPurpose(env.k);
    assert.deepEqual(
      rows.map((r) => r.purpose),
      ['turn'],
    );
    assert.equal(rows[0].request_count - usageBefore, 2 * N);
  });
});

describe('with extraction = "llm"', () => {
  let env: Env;
  before(async () => {
    env = await startEnv('extraction = "llm"');
  });
  after(() => stopEnv(env));

  const extraction = (content: string) => ({
    text: JSON.stringify({ memories: [{ content, level: 'session', category: 'project_context' }], relations: [] }),
    usage: { input: 300, output: 40 },
  });

  test('each turn (blocking or streamed) makes one more, background call, metered with its purpose', async () => {
    const agentId = await spawn(env.k, 'planner');
    const callsBefore = chatCalls(env.fake);
    const contents = ['The user is cooking for six guests on Saturday.', 'The user needs the shopping list by Friday.'];
    for (const [i, content] of contents.entries()) {
      env.fake.enqueue({ text: 'Sure.', usage: { input: 20, output: 5 } }, extraction(content));
      await turn(env.k, agentId, `Help me plan dinner, step ${i + 1}`, i === 1);
      // The next turn waits for this extraction, so the queued replies go where they belong.
      assert.ok(await until(async () => (await memoryCount(env.k, agentId)) === i + 1), `turn ${i + 1} memorized`);
    }
    assert.equal(chatCalls(env.fake) - callsBefore, 4);
    const extractionCall = env.fake.requests.filter((r) => r.path.endsWith('/chat/completions'))[callsBefore + 1].body as Sent;
    assert.match(JSON.stringify(extractionCall.messages), /You extract durable memories/);
    assert.match(JSON.stringify(extractionCall.messages), /Help me plan dinner, step 1/);
    const listed = await json<{ memories: Array<{ content: string; session_id: string | null }> }>(
      await env.k.request(`/api/memory/agents/${agentId}?level=session`),
    );
    assert.deepEqual(listed.memories.map((m) => m.content).sort(), [...contents].sort());

    assert.deepEqual(
      (await byPurpose(env.k)).map((r) => [r.purpose, r.request_count, r.input_tokens, r.output_tokens]),
      [
        ['memory_extraction', 2, 600, 80],
        ['turn', 2, 40, 10],
      ],
    );
    const budget = await json<{ hourly_tokens_used: number }>(await env.k.request(`/api/budget/agents/${agentId}`));
    assert.equal(budget.hourly_tokens_used, 730, "the background calls count against the agent's hourly tokens");
  });

  test("a background call that would pass the agent's hourly token quota is not made", async () => {
    // The turn (about 20 tokens estimated, 15 used) fits in 200; the extraction prompt alone is estimated above 250.
    const agentId = await spawn(env.k, 'thrifty', 'tools = []\nmax_llm_tokens_per_hour = 200');
    const callsBefore = chatCalls(env.fake);
    env.fake.enqueue({ text: 'Sure.', usage: { input: 10, output: 5 } });
    await turn(env.k, agentId, 'I live in Lyon');
    const refused = () =>
      env.k.logLines().some((line) => line.includes('memory extraction failed') && line.includes(agentId) && line.includes('hourly token quota exceeded'));
    assert.ok(await until(async () => refused()), 'the refusal is logged');
    assert.equal(chatCalls(env.fake) - callsBefore, 1, 'only the turn reached the provider');
    const budget = await json<{ hourly_tokens_used: number }>(await env.k.request(`/api/budget/agents/${agentId}`));
    assert.equal(budget.hourly_tokens_used, 15);
  });
});
