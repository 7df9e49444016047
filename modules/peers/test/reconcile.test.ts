/** [peers] connect changed at run time (POST /api/config/set): the address is dialled at once, and dropped when taken out. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const SECRET = 'peer-secret-0123456789abcdef';
const json = async <T>(res: Response) => (await res.json()) as T;

interface Status {
  listen_address: string;
  connect: Array<{ address: string; state: string; node_id: string | null }>;
}

let a: TestKernel;
let b: TestKernel;
let aAddress: string;
before(async () => {
  const only = ['peers', 'config-api', 'error-envelope'];
  a = await startTestKernel({ only, config: `[peers]\nlisten = "127.0.0.1:0"\nshared_secret = "${SECRET}"\nnode_id = "node-a"\n` });
  aAddress = (await json<Status>(await a.request('/api/network/status'))).listen_address;
  b = await startTestKernel({ only, config: `[peers]\nshared_secret = "${SECRET}"\nnode_id = "node-b"\nreconnect_ms = 100\n` });
});
after(async () => {
  await b?.stop();
  await a?.stop();
});

const set = (value: string[]) => b.request('/api/config/set', { method: 'POST', json: { path: 'peers.connect', value } });
const peersOf = async (k: TestKernel) =>
  (await json<{ peers: Array<{ node_id: string; state: string; address: string }> }>(await k.request('/api/peers'))).peers;

test('a peer added to connect is dialled; removed, its link closes and it is forgotten', async () => {
  assert.deepEqual((await json<Status>(await b.request('/api/network/status'))).connect, []);
  assert.equal((await set([aAddress])).status, 200);
  await waitFor(async () => (await peersOf(b)).find((p) => p.node_id === 'node-a' && p.state === 'connected'), 5000, 'a connected at b');
  const status = await json<Status>(await b.request('/api/network/status'));
  assert.deepEqual(status.connect, [{ address: aAddress, state: 'connected', node_id: 'node-a' }]);
  assert.equal((await peersOf(b))[0].address, aAddress, 'a dialled peer is listed at the address dialled');

  assert.equal((await set([])).status, 200);
  assert.deepEqual(await peersOf(b), []);
  assert.deepEqual((await json<Status>(await b.request('/api/network/status'))).connect, []);
  await waitFor(async () => (await peersOf(a)).every((p) => p.state !== 'connected'), 5000, 'the link closed at a');
  // No redial after the removal (reconnect_ms is 100).
  await new Promise((r) => setTimeout(r, 400));
  assert.deepEqual(await peersOf(b), []);
});
