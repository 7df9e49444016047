/**
 * Several processes on one home: a request made on one is decided on the other; the first hears it within a second
 * (its pending count, its stream), and a held tool call resumes once, on the process whose agent asked — or, when
 * that process is gone, on a live one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentEvents } from '@talon/agents';
import { eventChannel, FakeProvider, startAgentTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { json, MODULES, spawn } from './helpers.ts';

// Every process of the home uses the one provider.
const start = (fake: FakeProvider, home: string) =>
  startAgentTestKernel({ fake, only: MODULES, config: '[approval]\nrequire_approval = ["file_w*"]\n', home, heartbeatMs: 200, feedPollMs: 50 });
const post = (k: TestKernel, url: string, body?: unknown) => k.request(url, { method: 'POST', ...(body === undefined ? {} : { json: body }) });
const pendingOn = async (k: TestKernel) => (await json<{ pending: number }>(await k.request('/api/approvals/count'))).pending;
/** Requests the provider got that carry this text (a resumption turn is one request: its reply is text). */
const requestsWith = (fake: FakeProvider, text: string) => fake.requests.filter((r) => JSON.stringify(r.body).includes(text)).length;

/** Makes the agent call a gated tool on `k`; returns the request id. */
async function heldCall(k: TestKernel, fake: FakeProvider, agentId: string, file: string): Promise<string> {
  fake.enqueue({ toolCalls: [{ name: 'file_write', input: { path: file, content: 'hello' } }] }, { text: 'I asked.' });
  const res = await post(k, `/api/agents/${agentId}/message`, { message: `write ${file}` });
  assert.equal(res.status, 200);
  const list = await json<{ approvals: Array<{ id: string; payload: { input: { path: string } } }> }>(await k.request('/api/approvals'));
  return list.approvals.find((a) => a.payload.input.path === file)!.id;
}

describe('approvals: two processes on one home', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-approvals-two-'));
  const fake = new FakeProvider();
  let a: TestKernel;
  let b: TestKernel;
  let agentId: string;
  before(async () => {
    await fake.start();
    a = await start(fake, home);
    agentId = await spawn(a, 'writer');
    b = await start(fake, home);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test('a request made on one process is decided on the other; the first hears it within a second', async () => {
    const ac = new AbortController();
    const stream = await a.request('/api/approvals/stream', { signal: ac.signal });
    const reader = stream.body!.getReader();
    const created = await post(a, '/api/approvals', { agent_id: agentId, action: 'deploy', description: 'ship it' });
    assert.equal(created.status, 201);
    const { id } = await json<{ id: string }>(created);
    await waitFor(async () => (await pendingOn(b)) === 1, 1000, 'the request counted on the other process');
    const decided = await post(b, `/api/approvals/${id}/approve`, {});
    assert.equal(decided.status, 200);
    await waitFor(async () => (await pendingOn(a)) === 0, 1000, 'the decision heard by the first process');
    assert.equal((await json<{ status: string }>(await a.request(`/api/approvals/${id}`))).status, 'approved');
    let text = '';
    const deadline = Date.now() + 1000;
    while (!text.includes('event: approval.resolved') && Date.now() < deadline) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    assert.match(text, new RegExp(`event: approval.resolved\ndata: \\{"approvalId":"${id}","status":"approved"`), "the first process's stream shows it");
    assert.equal((await post(a, `/api/approvals/${id}/approve`, {})).status, 409, 'decided once, for both');
  });

  test('a held call of one process approved on the other runs once, on the process whose agent asked', async () => {
    const id = await heldCall(a, fake, agentId, 'two.txt');
    const row = async () =>
      (await a.kernel.store.one<{ node: string; resumed_at: number | null }>('SELECT node, resumed_at FROM approvals_requests WHERE id = ?', [id]))!;
    assert.equal((await row()).node, a.kernel.nodes.id);
    // Where the tool runs: each process's own (local) tool events.
    const ran = { a: 0, b: 0 };
    const scopes = (['a', 'b'] as const).map((name) => {
      const scope = eventChannel((name === 'a' ? a : b).kernel.events, agentEvents);
      scope.subscribe('tool.invoked', (e) => void (e.data.tool === 'file_write' && ran[name]++));
      return scope;
    });
    fake.enqueue({ text: 'The file is written.' });
    assert.equal((await post(b, `/api/approvals/${id}/approve`, {})).status, 200);
    await waitFor(() => existsSync(path.join(home, 'workspaces', agentId, 'two.txt')), 3000, 'the approved write');
    const outcome = `[approval ${id}] A human approved your file_write call; it ran`;
    await waitFor(() => requestsWith(fake, outcome) > 0, 3000, 'the outcome turn');
    // A pause that proves an absence: no second resume (from the other process) follows the first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(requestsWith(fake, outcome), 1, 'resumed once');
    scopes.forEach((scope) => scope.close());
    assert.deepEqual(ran, { a: 1, b: 0 }, 'the approved call ran on the process whose agent asked');
    const done = await row();
    assert.equal(done.node, a.kernel.nodes.id, 'by its owner');
    assert.ok(done.resumed_at);
  });
});

describe('approvals: held calls of processes that are gone', () => {
  test('a dead owner: a live process resumes its decided call; an owner unknown at start: the starting process does', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'talon-approvals-dead-'));
    const fake = new FakeProvider();
    await fake.start();
    let k = await start(fake, home);
    try {
      const agentId = await spawn(k, 'orphan');
      const ownedBy = (id: string, node: string) => k.kernel.store.run('UPDATE approvals_requests SET node = ? WHERE id = ?', [node, id]);
      // The owner is a process that was live a moment ago and stops beating.
      await k.kernel.store.run("INSERT INTO kernel_nodes (id, pid, host, boot_at, heartbeat_at, state) VALUES ('ghost', 1, 'h', ?, ?, 'live')", [
        Date.now(),
        Date.now(),
      ]);
      const first = await heldCall(k, fake, agentId, 'dead.txt');
      await ownedBy(first, 'ghost');
      fake.enqueue({ text: 'ok' });
      assert.equal((await post(k, `/api/approvals/${first}/reject`, {})).status, 200);
      await waitFor(() => requestsWith(fake, `[approval ${first}] A human rejected`) === 1, 5000, "the dead owner's call resumed");
      // The owner is a process the node table never knew (it died while none ran): the next start resumes its call.
      const second = await heldCall(k, fake, agentId, 'unknown.txt');
      await ownedBy(second, 'never-seen');
      assert.equal((await post(k, `/api/approvals/${second}/reject`, {})).status, 200);
      // A pause that proves an absence: the running process does not resume the call while its owner is unknown.
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(requestsWith(fake, `[approval ${second}]`), 0, "a running process leaves another owner's call");
      await k.stop();
      fake.enqueue({ text: 'ok' });
      k = await start(fake, home);
      await waitFor(() => requestsWith(fake, `[approval ${second}] A human rejected`) === 1, 5000, 'resumed at start');
    } finally {
      await k.stop();
      await fake.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
