/** The one registry of slash commands: a module commands does not know adds a command the chat answers and the API lists. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import WebSocket from 'ws';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const fixtures = path.join(import.meta.dirname, 'fixtures');
let k: TestKernel;
let agent: string;

before(async () => {
  k = await startTestKernel({
    only: ['agents-ws', 'commands', 'error-envelope', 'echo-command'],
    config: `module_paths = [${JSON.stringify(fixtures)}]\n[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n`,
  });
  const manifest = 'name = "cmd-agent"\n\n[model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n';
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest } });
  agent = ((await res.json()) as { agent_id: string }).agent_id;
});
after(() => k?.stop());

/** Sends one chat message over a fresh socket and returns the first frame answering it. */
async function chat(text: string): Promise<Record<string, unknown>> {
  const ws = new WebSocket(`${k.url.replace(/^http/, 'ws')}/api/agents/${agent}/ws`);
  const frames: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  try {
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ type: 'message', content: text }));
    const answer = await waitFor(() => frames.find((f) => f.type === 'command_result' || f.type === 'error'), 5000, `an answer to '${text}'`);
    return answer!;
  } finally {
    ws.terminate();
  }
}

const listed = async () => ((await (await k.request('/api/commands')).json()) as { commands: Array<{ cmd: string; usage: string; source: string }> }).commands;

test("a module's registered command is answered over the WebSocket chat and listed by GET /api/commands; removed with it", async () => {
  const answer = await chat('/echo hello there');
  assert.equal(answer.type, 'command_result', JSON.stringify(answer));
  assert.equal(answer.command, 'echo');
  assert.equal(answer.echoed, 'hello there');
  assert.equal(answer.agent_id, agent);
  const echo = (await listed()).find((c) => c.cmd === '/echo');
  assert.deepEqual(echo, { cmd: '/echo', desc: 'Says the text back', usage: '/echo <text>', source: 'chat' });
  assert.equal((await k.request('/api/commands/echo')).status, 200);

  await k.kernel.removeModule('echo-command');
  assert.equal(
    (await listed()).find((c) => c.cmd === '/echo'),
    undefined,
  );
  assert.equal((await k.request('/api/commands/echo')).status, 404);
  const gone = await chat('/echo hello');
  assert.equal(gone.type, 'error');
  assert.match(String(gone.content), /unknown command '\/echo'/);
  // The spec's commands stay, answered by the same registry.
  assert.equal((await chat('/think on')).enabled, true);
});
