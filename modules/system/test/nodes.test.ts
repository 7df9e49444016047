import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { startTestKernel, type TestKernel } from '@talon/testing';

const config = 'api_key = "test-key-0123456789"\n';
const auth = { authorization: 'Bearer test-key-0123456789' };

interface NodeView {
  id: string;
  host: string;
  pid: number;
  listen: string | null;
  state: string;
  boot_at: string;
  heartbeat_at: string;
  self: boolean;
}
interface Detail {
  database: string;
  fleet: boolean;
  nodes: NodeView[];
}

const kernels: TestKernel[] = [];
after(async () => {
  for (const k of kernels.reverse()) await k.stop();
});

const detail = async (k: TestKernel): Promise<Detail> => {
  const res = await k.request('/api/health/detail', { headers: auth });
  assert.equal(res.status, 200);
  return (await res.json()) as Detail;
};

test('GET /api/health/detail lists the processes on the database: each node once, itself marked, a stopped one as stopped', async () => {
  const a = await startTestKernel({ only: ['system', 'auth'], config });
  kernels.push(a);
  // A second process on the same home (the same database on either engine): a node of its own.
  const b = await startTestKernel({ only: ['system', 'auth'], home: a.home });
  kernels.push(b);

  const seen = await detail(a);
  assert.equal(seen.database, a.kernel.store.dialect);
  assert.equal(seen.fleet, a.kernel.store.dialect === 'postgres');
  assert.deepEqual(
    seen.nodes.map((n) => [n.id, n.state, n.self, n.listen, n.pid, n.host]),
    [
      [a.kernel.nodes.id, 'live', true, a.kernel.listenAddress(), process.pid, hostname()],
      [b.kernel.nodes.id, 'live', false, b.kernel.listenAddress(), process.pid, hostname()],
    ],
    'oldest boot first',
  );
  for (const n of seen.nodes) assert.ok(Date.parse(n.boot_at) <= Date.parse(n.heartbeat_at), `${n.boot_at} <= ${n.heartbeat_at}`);
  assert.deepEqual(
    (await detail(b)).nodes.map((n) => n.self),
    [false, true],
  );

  await b.stop();
  kernels.pop();
  assert.deepEqual(
    (await detail(a)).nodes.map((n) => [n.id, n.state]),
    [
      [a.kernel.nodes.id, 'live'],
      [b.kernel.nodes.id, 'stopped'],
    ],
  );
});

test('a node seen within the last day is listed, one gone for longer is not', async () => {
  // No beat during the test (the first runs at start): nothing deletes the old row, the list leaves it out itself.
  const k = await startTestKernel({ only: ['system', 'auth'], config, heartbeatMs: 600_000 });
  kernels.push(k);
  const insert = (id: string, hoursAgo: number) => {
    const at = Date.now() - hoursAgo * 3600_000;
    return k.kernel.store.run('INSERT INTO kernel_nodes (id, pid, host, listen, boot_at, heartbeat_at, state) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      id,
      1,
      'old-host',
      null,
      at - 60_000,
      at,
      'stopped',
    ]);
  };
  await insert('stopped-23h-ago', 23);
  await insert('stopped-25h-ago', 25);
  assert.deepEqual(
    (await detail(k)).nodes.map((n) => [n.id, n.state, n.listen]),
    [
      ['stopped-23h-ago', 'stopped', null],
      [k.kernel.nodes.id, 'live', k.kernel.listenAddress()],
    ],
  );
  assert.equal((await k.kernel.store.many("SELECT id FROM kernel_nodes WHERE id = 'stopped-25h-ago'")).length, 1, 'the old row is still there');
});
