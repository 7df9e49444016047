import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { Receiver } from './receiver.ts';

const CONFIG = '[webhooks]\nallow_hosts = ["127.0.0.1"]\nretry_base_ms = 20\nmax_attempts = 3\ndisable_after_failures = 5\n';
const ONLY = ['webhooks', 'error-envelope'];
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

interface Hook {
  id: string;
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  has_secret: boolean;
  disabled_reason: string | null;
  deliveries: { pending: number; delivered: number; failed: number };
}

describe('webhooks: outbound', () => {
  let k: TestKernel;
  const rx = new Receiver();
  before(async () => {
    await rx.start();
    k = await startTestKernel({ only: ONLY, config: CONFIG });
  });
  after(async () => {
    await k.stop();
    await rx.stop();
  });

  const create = async (body: Record<string, unknown>) =>
    k.request('/api/webhooks', { method: 'POST', json: { name: 'n', url: rx.url + '/hook', events: ['custom'], ...body } });

  test('create, list, get, update, delete; the secret is never read back', async () => {
    const res = await create({ secret: 'shh-very-secret', events: ['agent.spawned', 'message_completed'] });
    assert.equal(res.status, 201);
    const hook = await json<Hook>(res);
    assert.deepEqual(hook.events, ['agent_spawned', 'message_completed']);
    assert.equal(hook.has_secret, true);
    assert.ok(!JSON.stringify(hook).includes('shh-very-secret'));
    const list = await json<{ webhooks: Hook[]; total: number }>(await k.request('/api/webhooks'));
    assert.ok(list.webhooks.some((h) => h.id === hook.id));
    assert.ok(!JSON.stringify(list).includes('shh-very-secret'));
    const put = await k.request(`/api/webhooks/${hook.id}`, { method: 'PUT', json: { name: 'renamed', enabled: false } });
    const changed = await json<Hook>(put);
    assert.equal(changed.name, 'renamed');
    assert.equal(changed.enabled, false);
    assert.deepEqual(changed.events, hook.events, 'omitted fields stay');
    assert.equal((await k.request(`/api/webhooks/${hook.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await k.request(`/api/webhooks/${hook.id}`)).status, 404);
  });

  test('bad input: 400 for bad ids, URLs, events and bodies; SSRF rules on the target', async () => {
    assert.equal((await k.request('/api/webhooks/nope')).status, 400);
    assert.equal((await k.request(`/api/webhooks/${randomUUID()}`, { method: 'PUT', json: {} })).status, 404);
    assert.equal((await k.request(`/api/webhooks/${randomUUID()}/test`, { method: 'POST' })).status, 404);
    assert.equal((await create({ events: ['nonsense'] })).status, 400);
    assert.equal((await create({ url: 'ftp://127.0.0.1/x' })).status, 400);
    const ssrf = await create({ url: 'http://10.1.2.3/hook' });
    assert.equal(ssrf.status, 400);
    assert.match((await json<{ error: string }>(ssrf)).error, /SSRF protection.*private/);
    assert.equal((await create({ url: 'http://169.254.169.254/latest' })).status, 400);
    assert.equal((await k.request('/api/webhooks', { method: 'POST', json: {} })).status, 400);
    assert.equal((await k.request('/api/webhooks', { method: 'POST', json: [1] })).status, 400);
  });

  test('subscribed events are delivered signed, with the envelope and a timestamp', async () => {
    const hook = await json<Hook>(await create({ secret: 'sign-me-please', events: ['custom'] }));
    const before = rx.received.length;
    const event = k.kernel.events.publish('test', 'custom', { type: 'x.y', data: { n: 1 } });
    k.kernel.events.publish('test', 'agent.spawned', { agentId: randomUUID(), name: 'not subscribed' });
    await waitFor(() => rx.received.length > before, 3000, 'a delivery');
    const got = rx.received[before];
    const envelope = JSON.parse(got.body) as { id: string; event: string; timestamp: string; data: unknown };
    assert.deepEqual(envelope, { id: event.id, event: 'custom', timestamp: event.at, data: { type: 'x.y', data: { n: 1 } } });
    const expected = 'sha256=' + createHmac('sha256', 'sign-me-please').update(got.body).digest('hex');
    assert.equal(got.headers['x-webhook-signature'], expected);
    assert.ok(Math.abs(Number(got.headers['x-webhook-timestamp']) - Date.now()) < 10_000);
    assert.equal(got.headers['x-webhook-id'], event.id);
    // A pause that proves an absence: the event the hook is not subscribed to is not sent.
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(rx.received.length, before + 1, 'the unsubscribed event was not sent');
    await k.request(`/api/webhooks/${hook.id}`, { method: 'DELETE' });
  });

  test('a failed attempt is retried with backoff and journalled', async () => {
    const hook = await json<Hook>(await create({ url: rx.url + '/flaky' }));
    const start = rx.received.length;
    rx.answer = (n) => (n === start ? 500 : 200);
    k.kernel.events.publish('test', 'custom', { type: 'retry', data: {} });
    await waitFor(async () => (await json<Hook>(await k.request(`/api/webhooks/${hook.id}`))).deliveries.delivered === 1, 3000, 'delivered after a retry');
    const journal = await json<{ deliveries: Array<{ attempts: number; status: string; last_status: number }> }>(
      await k.request(`/api/webhooks/${hook.id}/deliveries`),
    );
    assert.equal(journal.deliveries[0].attempts, 2);
    assert.equal(journal.deliveries[0].status, 'delivered');
    rx.answer = () => 200;
    await k.request(`/api/webhooks/${hook.id}`, { method: 'DELETE' });
  });

  test('a webhook that keeps failing is disabled with the reason; enabling it resumes the queue', async () => {
    const hook = await json<Hook>(await create({ url: rx.url + '/down' }));
    rx.answer = () => 503;
    for (let i = 0; i < 3; i++) k.kernel.events.publish('test', 'custom', { type: 'fail', data: { i } });
    const disabled = await waitFor(
      async () => {
        const h = await json<Hook>(await k.request(`/api/webhooks/${hook.id}`));
        return h.enabled ? undefined : h;
      },
      5000,
      'disabled',
    );
    assert.match(disabled!.disabled_reason!, /disabled after \d+ consecutive failed attempts; last error: the target answered 503/);
    rx.answer = () => 200;
    await k.request(`/api/webhooks/${hook.id}`, { method: 'PUT', json: { enabled: true } });
    await waitFor(async () => (await json<Hook>(await k.request(`/api/webhooks/${hook.id}`))).deliveries.pending === 0, 3000, 'queue drained');
    await k.request(`/api/webhooks/${hook.id}`, { method: 'DELETE' });
  });

  test('POST /test sends a signed test payload and returns the remote status; 502 when unreachable', async () => {
    const hook = await json<Hook>(await create({ secret: 'test-secret-1' }));
    rx.answer = () => 418;
    const res = await json(await k.request(`/api/webhooks/${hook.id}/test`, { method: 'POST' }));
    assert.deepEqual(res, { status: 'sent', response_status: 418, webhook_id: hook.id });
    const last = rx.received.at(-1)!;
    assert.equal(JSON.parse(last.body).event, 'test');
    assert.ok(String(last.headers['x-webhook-signature']).startsWith('sha256='));
    rx.answer = () => 200;
    const dead = new Receiver();
    await dead.start();
    const gone = await json<Hook>(await create({ url: dead.url }));
    await dead.stop();
    const failed = await k.request(`/api/webhooks/${gone.id}/test`, { method: 'POST' });
    assert.equal(failed.status, 502);
    assert.equal((await json(failed)).status, 'error');
  });
});

describe('webhooks: event subscriptions', () => {
  let k: TestKernel;
  const rx = new Receiver();
  before(async () => {
    await rx.start();
    k = await startTestKernel({ only: [...ONLY, 'agents'], config: CONFIG });
  });
  after(async () => {
    await k.stop();
    await rx.stop();
  });

  test('POST {event_type, url, secret}, GET, PUT, DELETE; the event is delivered', async () => {
    const res = await k.request('/api/webhooks/events', { method: 'POST', json: { event_type: 'agent.spawned', url: rx.url, secret: 'abcdefgh' } });
    assert.equal(res.status, 201);
    const sub = await json<{ id: string; event_type: string; has_secret: boolean }>(res);
    assert.equal(sub.event_type, 'agent_spawned');
    const list = await json<{ webhooks: Array<{ id: string }> }>(await k.request('/api/webhooks/events'));
    assert.deepEqual(
      list.webhooks.map((w) => w.id),
      [sub.id],
    );
    // A real spawn by the agents module, not an event the test makes up.
    const agent = await k.kernel.services
      .view<{ spawn(o: { manifestToml: string }): { id: string } | Promise<{ id: string }> }>('agents.registry')
      .spawn({ manifestToml: 'name = "a1"\n[model]\nprovider = "default"\nmodel = "default"\n' });
    await waitFor(() => rx.received.length === 1, 3000, 'delivery');
    const envelope = JSON.parse(rx.received[0].body) as { event: string; data: { agentId: string; name: string } };
    assert.equal(envelope.event, 'agent_spawned');
    assert.deepEqual([envelope.data.agentId, envelope.data.name], [agent.id, 'a1']);
    const put = await json<{ event_type: string }>(
      await k.request(`/api/webhooks/events/${sub.id}`, { method: 'PUT', json: { event_type: 'approval_requested' } }),
    );
    assert.equal(put.event_type, 'approval_requested');
    assert.equal((await k.request(`/api/webhooks/events/${sub.id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await k.request(`/api/webhooks/events/${sub.id}`, { method: 'DELETE' })).status, 404);
  });

  test('bad input', async () => {
    const post = (body: unknown) => k.request('/api/webhooks/events', { method: 'POST', json: body });
    assert.equal((await post({ event_type: 'agent_spawned', url: rx.url })).status, 400, 'secret is required');
    assert.equal((await post({ event_type: 'nope', url: rx.url, secret: 'abcdefgh' })).status, 400);
    assert.equal((await post({ event_type: 'agent_spawned', url: 'http://127.0.0.2:1/x', secret: 'abcdefgh' })).status, 400, 'loopback only when allow-listed');
    assert.equal((await k.request('/api/webhooks/events/x', { method: 'PUT', json: {} })).status, 400);
    assert.equal((await k.request(`/api/webhooks/events/${randomUUID()}`, { method: 'PUT', json: {} })).status, 404);
  });
});

describe('webhooks: the journal survives a restart', () => {
  test('deliveries queued while the receiver is down are sent after the next start', async () => {
    const rx = new Receiver();
    await rx.start();
    const port = rx.port;
    await rx.stop();
    const k1 = await startTestKernel({
      only: ONLY,
      config: CONFIG.replace('retry_base_ms = 20', 'retry_base_ms = 60000').replace('disable_after_failures = 5', 'disable_after_failures = 100'),
      keepHome: true,
    });
    const hook = await json<Hook>(
      await k1.request('/api/webhooks', { method: 'POST', json: { name: 'r', url: `http://127.0.0.1:${port}/`, events: ['all'] } }),
    );
    for (let i = 0; i < 5; i++) k1.kernel.events.publish('test', 'custom', { type: 'r', data: { i } });
    await waitFor(async () => (await json<Hook>(await k1.request(`/api/webhooks/${hook.id}`))).deliveries.pending === 5, 3000, 'journalled');
    await k1.stop();
    const back = new Receiver();
    await back.start(port);
    const k2 = await startTestKernel({ only: ONLY, home: k1.home, config: CONFIG });
    try {
      await waitFor(() => new Set(back.received.map((r) => JSON.parse(r.body).data.data.i)).size === 5, 5000, 'all five delivered');
    } finally {
      await k2.stop();
      await back.stop();
      rmSync(k1.home, { recursive: true, force: true });
    }
  });
});
