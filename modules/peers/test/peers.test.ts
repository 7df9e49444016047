import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startAgentTestKernel, startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { AgentRegistry } from '@talon/agents';

const SECRET = 'peer-secret-0123456789abcdef';
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

interface Peer {
  node_id: string;
  node_name: string;
  address: string;
  state: string;
  authenticated: boolean;
  last_seen: string | null;
  agents: Array<{ name: string }>;
}

describe('peers: two nodes on loopback', () => {
  const fake = new FakeProvider();
  const nodes: TestKernel[] = [];
  let a: TestKernel;
  let b: TestKernel;
  let aAddress: string;

  const node = async (peers: string, extra: string[] = []) => {
    const k = await startAgentTestKernel({
      fake,
      only: ['peers', 'comms', 'agents', 'security', 'error-envelope', ...extra],
      config: `log_level = "info"\n[peers]\n${peers}`,
    });
    nodes.push(k);
    return k;
  };
  const logged = (k: TestKernel, ...texts: RegExp[]) => k.logLines().some((l) => texts.every((t) => t.test(l)));

  before(async () => {
    await fake.start();
    a = await node(`listen = "127.0.0.1:0"\nshared_secret = "${SECRET}"\nnode_id = "node-a"\nnode_name = "alpha"\nreconnect_ms = 100\n`);
    await a.kernel.services
      .view<AgentRegistry>('agents.registry')
      .spawn({ manifestToml: 'name = "oracle"\n[model]\nprovider = "default"\nmodel = "default"\n' });
    aAddress = (await json<{ listen_address: string }>(await a.request('/api/network/status'))).listen_address;
    b = await node(`connect = ["${aAddress}"]\nshared_secret = "${SECRET}"\nnode_id = "node-b"\nnode_name = "beta"\nreconnect_ms = 100\n`);
  });
  after(async () => {
    for (const k of nodes.reverse()) await k.stop();
    await fake.stop();
  });

  test('the nodes admit each other, pin identities and list each other', async () => {
    const fromA = await waitFor(
      async () => (await json<{ peers: Peer[] }>(await a.request('/api/peers'))).peers.find((p) => p.node_id === 'node-b' && p.state === 'connected'),
      5000,
      'b at a',
    );
    assert.equal(fromA!.authenticated, true);
    assert.equal(fromA!.node_name, 'beta');
    const fromB = await waitFor(
      async () => (await json<{ peers: Peer[] }>(await b.request('/api/peers'))).peers.find((p) => p.node_id === 'node-a' && p.agents.length > 0),
      5000,
      'a at b',
    );
    assert.deepEqual(
      fromB!.agents.map((x) => x.name),
      ['oracle'],
    );
    const one = await json<Peer>(await b.request('/api/peers/node-a'));
    assert.equal(one.state, 'connected');
    assert.ok(one.last_seen);
    const status = await json<{ node_id: string; connected_peers: number; pinned_peers: number; identity_fingerprint: string; messages: { sent: number } }>(
      await b.request('/api/network/status'),
    );
    assert.equal(status.node_id, 'node-b');
    assert.equal(status.connected_peers, 1);
    assert.equal(status.pinned_peers, 1);
    assert.match(status.identity_fingerprint, /^[0-9a-f]{64}$/);
    assert.ok(status.messages.sent >= 1);
    assert.equal((await b.request('/api/peers/nobody')).status, 404);
  });

  test('an agent message crosses the link and the reply comes back (also through comms)', async () => {
    fake.enqueue({ text: 'the answer is 42' });
    const res = await b.request('/api/peers/node-a/message', { method: 'POST', json: { agent: 'oracle', message: 'what is the answer?' } });
    assert.equal(res.status, 200);
    assert.equal((await json(res)).response, 'the answer is 42');
    assert.match(JSON.stringify(fake.requests.at(-1)!.body), /\[message from api on peer beta\]\\nwhat is the answer\?/);
    fake.enqueue({ text: 'via comms' });
    const viaComms = await b.request('/api/comms/send', { method: 'POST', json: { to: 'peer:node-a/agent:oracle', content: 'hi' } });
    assert.equal((await json(viaComms)).response, 'via comms');
    const routes = await json<{ routes: Array<{ address: string; via: string }> }>(await b.request('/api/comms/topology'));
    assert.ok(routes.routes.some((r) => r.address === 'peer:node-a/agent:oracle' && r.via === 'peer'));
    assert.equal((await b.request('/api/peers/node-a/message', { method: 'POST', json: { agent: 'nobody', message: 'x' } })).status, 404);
    assert.equal((await b.request('/api/peers/node-a/message', { method: 'POST', json: {} })).status, 400);
  });

  test('/api/security shows peer_hmac_auth active', async () => {
    const security = await json<{ security_systems: Record<string, string> }>(await a.request('/api/security'));
    assert.equal(security.security_systems.peer_hmac_auth, 'active');
  });

  test('a node with a wrong secret is refused', async () => {
    const c = await node(`connect = ["${aAddress}"]\nshared_secret = "another-secret-0123456789"\nnode_id = "node-c"\nreconnect_ms = 100\n`);
    await waitFor(() => logged(a, /peer connection refused/, /shared-secret HMAC does not match/), 5000, 'a refusal at a');
    const peers = await json<{ peers: Peer[] }>(await a.request('/api/peers'));
    assert.ok(!peers.peers.some((p) => p.node_id === 'node-c'), 'never admitted');
    assert.equal((await json<{ peers: Peer[] }>(await c.request('/api/peers'))).peers.length, 0);
  });

  test('a known node id with a changed identity key is refused and logged', async () => {
    const impostor = await node(`connect = ["${aAddress}"]\nshared_secret = "${SECRET}"\nnode_id = "node-b"\nnode_name = "impostor"\nreconnect_ms = 100\n`);
    await waitFor(() => logged(a, /peer connection refused/, /identity changed: node 'node-b' presented identity/), 5000, 'identity refusal');
    const peers = await json<{ peers: Peer[] }>(await a.request('/api/peers'));
    assert.equal(peers.peers.find((p) => p.node_id === 'node-b')!.node_name, 'beta');
    await impostor.stop();
  });
});

describe('peers: configuration', () => {
  test('listen or connect without a shared secret stops start-up', async () => {
    await assert.rejects(startTestKernel({ only: ['peers'], config: '[peers]\nlisten = "127.0.0.1:0"\n' }), /shared_secret/);
  });

  test('unconfigured: no listener, empty lists; the nodes on the database are listed all the same', async () => {
    const k = await startTestKernel({ only: ['peers', 'error-envelope'] });
    try {
      assert.deepEqual(await json(await k.request('/api/peers')), { peers: [], total: 0 });
      const status = await json<{ enabled: boolean; listen_address: string | null; database: string; fleet: boolean; nodes: Array<Record<string, unknown>> }>(
        await k.request('/api/network/status'),
      );
      assert.equal(status.enabled, false);
      assert.equal(status.listen_address, null);
      assert.equal(status.database, k.kernel.store.dialect);
      assert.equal(status.fleet, k.kernel.store.dialect === 'postgres');
      assert.equal(status.nodes.length, 1);
      const [self] = status.nodes;
      assert.deepEqual(Object.keys(self).sort(), ['boot_at', 'heartbeat_at', 'host', 'id', 'listen', 'pid', 'self', 'state']);
      assert.deepEqual(
        { id: self.id, pid: self.pid, listen: self.listen, state: self.state, self: self.self },
        { id: k.kernel.nodes.id, pid: process.pid, listen: k.kernel.listenAddress(), state: 'live', self: true },
      );
      assert.ok(Date.parse(String(self.boot_at)) <= Date.parse(String(self.heartbeat_at)));
      assert.equal((await k.request('/api/peers/x/message', { method: 'POST', json: { agent: 'a', message: 'm' } })).status, 404);
    } finally {
      await k.stop();
    }
  });
});
