/** Two processes on one home: a socket on one hears at once of agents spawned or killed on the other. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const ONLY = ['agents-ws', 'agents', 'llm', 'llm-openai', 'error-envelope'];
/** Far beyond the test's waits: an agents_updated it sees was pushed by an event, not by the timer. */
const CONFIG = '[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n[agents_ws]\nagents_updated_interval_ms = 600000\n';
const FAST = { heartbeatMs: 100, feedPollMs: 50 };

let a: TestKernel;
let b: TestKernel;
before(async () => {
  a = await startTestKernel({ only: ONLY, config: CONFIG, ...FAST });
  b = await startTestKernel({ only: ONLY, home: a.home, ...FAST });
  // A publishes to the other processes once a heartbeat has shown it one.
  await waitFor(() => !a.kernel.nodes.alone, 3000, 'a heartbeat of A that sees B');
});
after(async () => {
  await b?.stop();
  await a?.stop();
});

const spawn = async (k: TestKernel, name: string) => {
  const res = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n` },
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { agent_id: string }).agent_id;
};

/** The names in the next agents_updated frame that satisfies `want`, within 3 s. */
function agentsUpdated(ws: WebSocket, want: (names: string[]) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no matching agents_updated within 3 s')), 3000);
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { type: string; agents?: Array<{ name: string }> };
      const names = frame.agents?.map((x) => x.name) ?? [];
      if (frame.type === 'agents_updated' && want(names)) {
        clearTimeout(timer);
        resolve(names);
      }
    });
  });
}

test('agents_updated is pushed on a spawn and a kill made by another process', async () => {
  const home = await spawn(a, 'home-agent');
  // The socket is opened on B for an agent A spawned: B's registry follows A's.
  await waitFor(async () => (await b.request(`/api/agents/${home}`)).status === 200, 3000, 'the agent to reach B');
  const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}/api/agents/${home}/ws`);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  try {
    const spawned = agentsUpdated(ws, (names) => names.includes('newcomer'));
    const newcomer = await spawn(a, 'newcomer');
    assert.ok((await spawned).includes('home-agent'));
    const killed = agentsUpdated(ws, (names) => !names.includes('newcomer'));
    assert.equal((await a.request(`/api/agents/${newcomer}`, { method: 'DELETE' })).status, 200);
    assert.deepEqual(await killed, ['home-agent']);
  } finally {
    ws.terminate();
  }
});
