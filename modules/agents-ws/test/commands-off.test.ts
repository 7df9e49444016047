/**
 * The chat without the commands module: switching commands off leaves the WebSocket chat running; a message still
 * gets its turn, and a slash command is answered that commands are off (never sent to the agent as text).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { setConfig, waitFor } from '@talon/testing';
import { startHarness, type Harness } from './harness.ts';
import { Client } from './client.ts';
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'modules are not switched at run time on PostgreSQL (test/fleet-reload.test.ts)' };

let h: Harness;
let agent: string;
const clients: Client[] = [];
const open = async () => {
  const c = await Client.open(`${h.kernel.url.replace(/^http/, 'ws')}/api/agents/${agent}/ws`);
  clients.push(c);
  assert.equal((await c.next()).type, 'connected');
  return c;
};

before(async () => {
  h = await startHarness(['agents-ws', 'commands', 'agents', 'llm', 'llm-openai', 'error-envelope']);
  agent = await h.spawn('plain');
});
after(async () => {
  for (const c of clients) c.ws.terminate();
  await h.stop();
});

it('with the commands module switched off, the chat still answers a message and says commands are off for /help', sqliteOnly, async () => {
  const before = await open();
  assert.match(String((await before.command('/help')).content), /unknown command '\/help'/, 'the registry answers while it runs');

  await setConfig(h.kernel, 'modules.disabled', ['commands']);
  await waitFor(() => h.kernel.kernel.modules().find((m) => m.id === 'commands')?.state !== 'running', 5000, 'commands to stop');
  assert.equal(h.kernel.kernel.modules().find((m) => m.id === 'agents-ws')?.state, 'running', 'the chat does not need commands');

  const c = await open();
  const requests = h.fake.requests.length;
  assert.deepEqual(await c.command('/help'), { type: 'error', content: '/help was not run: commands are off (the commands module is not running)' });
  c.send({ type: 'command', command: 'new', args: '' });
  assert.match(String((await c.next()).content), /^\/new was not run: commands are off/);
  assert.equal(h.fake.requests.length, requests, 'no command reached the agent as text');

  h.fake.enqueue({ text: 'still here' });
  c.send({ type: 'message', content: 'hello' });
  assert.equal((await c.next()).type, 'thinking');
  assert.equal((await c.nextOf('response')).content, 'still here');
});
