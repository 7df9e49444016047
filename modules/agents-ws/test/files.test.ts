/** A turn whose tools made files (generated media) ends with a response frame that lists them, as the HTTP reply does. */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startHarness, type Harness } from './harness.ts';
import { Client } from './client.ts';

/** The agents module's test tool `make_image` (stores a PNG through uploadFiles and returns it in ToolOutput.files). */
const AGENT_FIXTURES = path.resolve(import.meta.dirname, '../../agents/test/fixtures');

let h: Harness;
let client: Client | undefined;

before(async () => {
  h = await startHarness(['agents-ws', 'agents', 'llm', 'llm-openai', 'error-envelope', 'file-tools'], `module_paths = [${JSON.stringify(AGENT_FIXTURES)}]\n`);
});
after(async () => {
  client?.ws.terminate();
  await h.stop();
});

it("the response frame carries the files the turn's tools made, each served at its url", async () => {
  const agent = await h.kernel.spawnAgent('painter', { capabilities: { tools: ['make_image'] } });
  client = await Client.open(`${h.kernel.url.replace(/^http/, 'ws')}/api/agents/${agent}/ws`);
  assert.equal((await client.next()).type, 'connected');
  h.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'dot' } }] }, { text: 'Here is your dot.' });
  client.send({ type: 'message', content: 'draw a dot' });
  const response = await client.nextOf('response');
  assert.equal(response.content, 'Here is your dot.');
  const files = response.files as Array<{ file_id: string; url: string; content_type: string }>;
  assert.equal(files?.length, 1, JSON.stringify(response));
  assert.equal(files[0].content_type, 'image/png');
  const served = await h.kernel.request(files[0].url);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get('content-type'), 'image/png');
});
