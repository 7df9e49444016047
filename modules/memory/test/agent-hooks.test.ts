/**
 * The agent-loop integration: recall into the system prompt (beforeModelCall),
 * the memory_search tool (tools waterfall), and auto-memorize (afterTurn) with
 * a real llm module talking to the fake provider. The agents module's hook
 * catalogue is created here directly, so the test does not need the agent loop.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { TapFacade } from '@talon/module-sdk';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { agentHooks, type AgentRecord, type ModelCallContext, type ToolContext, type TurnRecord } from '@talon/agents';
import { llmHooks, llmService, type CallRecord, type LlmService } from '@talon/llm';
import { semanticMemory } from '@talon/memory';
import { defaultMemoryConfig, type MemoryConfig } from '../config.ts';
import type { Memory } from '../services/memory.ts';
import { Extractor, parseExtraction, parseModelRef } from '../services/extractor.ts';
import { RECALL_HEADING, tapAgentHooks } from '../services/agent-hooks.ts';
import { AGENT_A } from './helpers.ts';

type Hooks = ReturnType<(typeof agentHooks)['create']>;

/** The tap view of a raw catalogue (what ctx.hooks.tryTap gives a module). */
function facade(raw: Hooks): TapFacade<Hooks> {
  const view = (hook: { tap: Function; tapPromise: Function }) => ({
    tap: (label: string, fn: never) => hook.tap(label, fn),
    tapPromise: (label: string, fn: never) => hook.tapPromise(label, fn),
  });
  return Object.fromEntries(Object.entries(raw).map(([k, h]) => [k, view(h as never)])) as unknown as TapFacade<Hooks>;
}

const agent: AgentRecord = {
  id: AGENT_A,
  name: 'helper',
  state: 'Running',
  mode: 'Normal',
  createdAt: new Date().toISOString(),
  sessionId: 'aaaaaaaa-0000-4000-8000-000000000001',
  manifest: {
    name: 'helper',
    model: { provider: 'openai', model: 'fake-model' },
    capabilities: { tools: [], network: [], memory_read: ['*'], memory_write: ['*'], shell: [] },
    extra: {},
  },
  description: '',
  tags: [],
  systemPrompt: 'You are helpful.',
  model: { provider: 'openai', model: 'fake-model' },
  tools: [],
  skills: [],
  mcpServers: [],
  identity: {},
  config: {},
  workspace: '/tmp',
  maxLlmTokensPerHour: 0,
};

let k: AgentTestKernel;
let memory: Memory;
let llm: LlmService;
let raw: Hooks;
let extractor: Extractor;
const calls: CallRecord[] = [];
let config: MemoryConfig;

before(async () => {
  k = await startAgentTestKernel({ only: ['memory', 'llm', 'error-envelope'] });
  memory = k.kernel.services.view<Memory>(semanticMemory.id);
  llm = k.kernel.services.view<LlmService>(llmService.id);
  (k.kernel.hooks.catalogue(llmHooks.id)!.hooks as ReturnType<(typeof llmHooks)['create']>).afterCall.tapPromise('test', async (r) => {
    calls.push(r);
  });
  config = defaultMemoryConfig({ max_retrieve: 2, extractions_per_hour: 2 });
  raw = agentHooks.create();
  extractor = new Extractor(
    memory,
    () => llm,
    () => config,
    pino({ level: 'silent' }),
  );
  tapAgentHooks(facade(raw), memory, extractor, () => config);
  for (const content of ['The user is vegetarian and avoids fish.', 'The user works as a data engineer at Acme.', 'The user has two children.']) {
    await memory.add({ content, agentId: AGENT_A, level: 'user' });
  }
  await memory.add({ content: 'The user is vegetarian too (another agent).', agentId: '99999999-9999-4999-8999-999999999999', level: 'user' });
});

after(async () => {
  await k.stop();
});

const modelCall = (userMessage: string, system = 'You are helpful.'): ModelCallContext => ({ agent, sessionId: agent.sessionId, userMessage, system });

test('beforeModelCall appends the most relevant memories of the agent (max_retrieve) to the system prompt', async () => {
  const out = await raw.beforeModelCall.promise(modelCall('Suggest a vegetarian dinner recipe without fish'));
  assert.ok(out.system.startsWith('You are helpful.'));
  assert.ok(out.system.includes(RECALL_HEADING));
  assert.ok(out.system.includes('- The user is vegetarian and avoids fish.'));
  assert.ok(!out.system.includes('another agent'));
  const bullets = out.system.split('\n').filter((l) => l.startsWith('- '));
  assert.ok(bullets.length >= 1 && bullets.length <= 2);
  // Recalled entries count as accessed.
  const hit = (await memory.entries.list({ agentId: AGENT_A }, { limit: 10, offset: 0 })).items.find((i) => i.content.startsWith('The user is vegetarian'))!;
  assert.equal(hit.access_count, 1);
  // The second model call of the same turn neither searches again nor appends twice.
  const again = await raw.beforeModelCall.promise(modelCall('Suggest a vegetarian dinner recipe without fish', out.system));
  assert.equal(again.system, out.system);
});

test('beforeModelCall leaves the prompt alone when nothing is relevant or auto_retrieve is off', async () => {
  const none = await raw.beforeModelCall.promise(modelCall('What is the capital of Mongolia?'));
  assert.equal(none.system, 'You are helpful.');
  config = { ...config, auto_retrieve: false };
  try {
    const off = await raw.beforeModelCall.promise(modelCall('Where does the user work? Acme?'));
    assert.equal(off.system, 'You are helpful.');
  } finally {
    config = { ...config, auto_retrieve: true };
  }
});

test('the tools waterfall adds memory_search, which searches only the calling agent', async () => {
  const tools = raw.tools.call([]);
  const tool = tools.find((t) => t.name === 'memory_search');
  assert.ok(tool);
  assert.equal(raw.tools.call([tool]).filter((t) => t.name === 'memory_search').length, 1);
  const ctx = { agent, sessionId: agent.sessionId } as ToolContext;
  const out = await tool.execute({ query: 'where does the user work' }, ctx);
  assert.ok(!out.isError);
  const hits = JSON.parse(out.content) as Array<{ content: string; relevance: number }>;
  assert.equal(hits[0].content, 'The user works as a data engineer at Acme.');
  assert.equal((await tool.execute({ query: 'zebra quantum' }, ctx)).content, "No memories match 'zebra quantum'.");
  assert.equal((await tool.execute({ query: '' }, ctx)).isError, true);
});

const turn = (user: string, assistant: string): TurnRecord => ({
  agent,
  sessionId: agent.sessionId,
  turnId: `turn-${Math.random()}`,
  message: user,
  exchange: { user, assistant },
  result: {
    turnId: 't',
    agentId: agent.id,
    sessionId: agent.sessionId,
    response: assistant,
    inputTokens: 1,
    outputTokens: 1,
    iterations: 1,
    costUsd: 0,
    interrupted: false,
  },
});

test('extraction = "llm": afterTurn extracts facts with one metered LLM call (purpose memory_extraction), dedupes, stores relations, rate-limits', async () => {
  config = { ...config, extraction: 'llm' };
  try {
    await llmExtraction();
  } finally {
    config = { ...config, extraction: 'rules' };
  }
});

async function llmExtraction(): Promise<void> {
  const extraction = {
    memories: [
      { content: 'The user is learning to play the cello.', level: 'user', category: 'personal_detail' },
      { content: 'The user is vegetarian and avoids fish.', level: 'user', category: 'preference' },
      { content: 'The user wants the report in French for this conversation.', level: 'session', category: 'communication_style' },
      { content: '' },
    ],
    relations: [{ subject: 'User', relation: 'works at', object: 'Acme', confidence: 0.9 }],
  };
  k.fake.enqueue({ text: `Here you go:\n${JSON.stringify(extraction)}` });
  const chatBefore = k.fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
  await raw.afterTurn.promise(turn('I started cello lessons. Please answer in French today.', "D'accord!"));
  await extractor.settled();
  const chats = k.fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
  assert.equal(chats.length, chatBefore + 1);
  const sent = chats.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  assert.ok(JSON.stringify(sent.messages).includes('cello lessons'));
  assert.equal(calls.at(-1)?.meta.purpose, 'memory_extraction');
  assert.equal(calls.at(-1)?.meta.agentId, agent.id);

  const items = (await memory.entries.list({ agentId: AGENT_A }, { limit: 50, offset: 0 })).items;
  const cello = items.find((i) => i.content.includes('cello'));
  assert.equal(cello?.level, 'user');
  assert.equal(cello?.source, 'conversation');
  const french = items.find((i) => i.content.includes('French'));
  assert.equal(french?.level, 'session');
  assert.equal(french?.session_id, agent.sessionId);
  assert.equal(items.filter((i) => i.content === 'The user is vegetarian and avoids fish.').length, 1, 'duplicate dropped');
  const rel = await memory.relations.query(AGENT_A, { subject: 'User' }, { limit: 10, offset: 0 });
  assert.deepEqual(
    rel.relations.map((r) => [r.relation, r.object]),
    [['works_at', 'Acme']],
  );

  // extractions_per_hour = 2: the second turn is extracted, the third is not.
  k.fake.enqueue({ text: '{"memories":[],"relations":[]}' });
  await raw.afterTurn.promise(turn('thanks', 'you are welcome'));
  await raw.afterTurn.promise(turn('one more thing about my cello', 'sure'));
  await extractor.settled();
  assert.equal(k.fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length, chatBefore + 2);
}

test('by default (rules) afterTurn stores the facts the user states, with no LLM call', async () => {
  const before = k.fake.requests.length;
  await raw.afterTurn.promise(turn('My name is Dana. I prefer answers in bullet points, and I love jazz.', 'Noted, Dana.'));
  await raw.afterTurn.promise(turn('Also, I love hiking. Remember that my flight leaves on May 3.', 'Sure.'));
  await raw.afterTurn.promise(turn('hi, how are you?', 'Fine, thanks!'));
  await extractor.settled();
  assert.equal(k.fake.requests.length, before, 'no provider call');
  const contents = (await memory.entries.list({ agentId: AGENT_A, level: 'user' }, { limit: 50, offset: 0 })).items.map((i) => i.content);
  for (const fact of [
    "The user's name is Dana.",
    'The user prefers answers in bullet points.',
    'The user loves jazz.',
    'The user loves hiking.',
    'The user asked to remember that their flight leaves on May 3.',
  ])
    assert.ok(contents.includes(fact), `stored: ${fact}`);
  assert.ok(!contents.some((c) => /how are you|Fine/i.test(c)), 'nothing from small talk or the answer');
  const named = await memory.relations.query(AGENT_A, { relation: 'is_named' }, { limit: 10, offset: 0 });
  assert.deepEqual(
    named.relations.map((r) => [r.subject, r.object]),
    [['User', 'Dana']],
  );
});

test('rules: a new single-valued fact replaces the old one (kept in its history); facts that only look alike are both kept', async () => {
  await raw.afterTurn.promise(turn('I live in Lyon.', 'Nice.'));
  await raw.afterTurn.promise(turn('We moved: I live in New York now.', 'Welcome.'));
  await raw.afterTurn.promise(turn('I live in New York now!', 'Yes.'));
  await extractor.settled();
  const homes = (await memory.entries.list({ agentId: AGENT_A, category: 'home' }, { limit: 10, offset: 0 })).items;
  assert.deepEqual(
    homes.map((h) => h.content),
    ['The user lives in New York now.'],
  );
  assert.deepEqual(
    (await memory.entries.history(homes[0].id)).history.map((h) => [h.content, h.reason]),
    [['The user lives in Lyon.', 'extraction update']],
  );
  // "loves jazz" and "loves hiking" (previous test) share their template's words but are different facts.
  const loves = (await memory.entries.list({ agentId: AGENT_A, category: 'preference' }, { limit: 50, offset: 0 })).items.filter((i) =>
    i.content.startsWith('The user loves'),
  );
  assert.equal(loves.length, 2);
});

test('auto_memorize off: no LLM call', async () => {
  const before = k.fake.requests.length;
  const off = new Extractor(
    memory,
    () => llm,
    () => ({ ...config, auto_memorize: false }),
    pino({ level: 'silent' }),
  );
  assert.equal(off.enqueue(turn('I love jazz', 'noted')), false);
  await off.settled();
  assert.equal(k.fake.requests.length, before);
});

test('parseExtraction tolerates prose and bad items; parseModelRef', () => {
  assert.deepEqual(parseExtraction('no json here'), { memories: [], relations: [] });
  assert.deepEqual(parseExtraction('{"memories":[{"content":" x ","level":"bogus"}],"relations":[{"subject":"a"}]}'), {
    memories: [{ content: 'x', level: 'session', category: null }],
    relations: [],
  });
  assert.deepEqual(parseModelRef('openai/gpt-4o-mini'), { provider: 'openai', model: 'gpt-4o-mini' });
  assert.deepEqual(parseModelRef('ollama:llama3.2'), { provider: 'ollama', model: 'llama3.2' });
  assert.deepEqual(parseModelRef('fast'), { provider: 'default', model: 'fast' });
});
