import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { approvalEvents } from '@talon/approvals';
import { eventChannel, setConfig, waitFor } from '@talon/testing';
import { code, json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

const post = (env: Env, url: string, body?: unknown) => env.k.request(url, { method: 'POST', ...(body === undefined ? {} : { json: body }) });

describe('approvals: endpoints', () => {
  let env: Env;
  let agentId: string;
  before(async () => {
    env = await startEnv('max_pending_per_agent = 3');
    agentId = await spawn(env.k, 'asker');
  });
  after(() => stopEnv(env));

  const create = async (action = 'deploy') => {
    const res = await post(env, '/api/approvals', { agent_id: agentId, action, description: 'ship it', payload: { env: 'prod' } });
    assert.equal(res.status, 201);
    return json<{ id: string; status: string }>(res);
  };

  test('create, get, list (pending first), count', async () => {
    const first = await create('shell_exec');
    assert.equal(first.status, 'pending');
    const one = await json(await env.k.request(`/api/approvals/${first.id}`));
    assert.deepEqual(Object.keys(one).sort(), [
      'action',
      'agent_id',
      'agent_name',
      'created_at',
      'decided_at',
      'decided_by',
      'description',
      'expires_at',
      'id',
      'notified',
      'payload',
      'risk_level',
      'status',
    ]);
    assert.equal(one.risk_level, 'critical');
    assert.deepEqual(one.payload, { env: 'prod' });
    const second = await create();
    await post(env, `/api/approvals/${first.id}/reject`);
    const list = await json<{ approvals: Array<{ id: string; status: string }>; total: number }>(await env.k.request('/api/approvals'));
    assert.equal(list.approvals[0].id, second.id, 'pending first');
    assert.ok(list.approvals.findIndex((a) => a.id === first.id) > 0);
    assert.equal((await json(await env.k.request('/api/approvals/count'))).pending, 1);
    await post(env, `/api/approvals/${second.id}/reject`);
  });

  test('bad input: 400 for malformed ids and bodies, 404 unknown, 409 decided, 429 too many pending', async () => {
    assert.equal((await env.k.request('/api/approvals/nope')).status, 400);
    assert.equal((await env.k.request(`/api/approvals/${randomUUID()}`)).status, 404);
    assert.equal((await post(env, `/api/approvals/${randomUUID()}/approve`)).status, 404);
    assert.equal((await post(env, '/api/approvals', {})).status, 400);
    assert.equal((await post(env, '/api/approvals', { agent_id: 'x', action: 'a' })).status, 400);
    const unknown = await post(env, '/api/approvals', { agent_id: randomUUID(), action: 'a' });
    assert.equal(unknown.status, 404);
    assert.match((await json<{ error: string }>(unknown)).error, /agent/);
    assert.equal((await env.k.request('/api/approvals', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' })).status, 400);
    const ids = [(await create()).id, (await create()).id, (await create()).id];
    const fourth = await post(env, '/api/approvals', { agent_id: agentId, action: 'x' });
    assert.equal(fourth.status, 429);
    await post(env, '/api/approvals/batch', { ids, decision: 'reject' });
    assert.equal((await post(env, `/api/approvals/${ids[0]}/approve`)).status, 409);
  });

  test('batch is all or none', async () => {
    const a = (await create()).id;
    const b = (await create()).id;
    const refused = await post(env, '/api/approvals/batch', { ids: [a, b, randomUUID()], decision: 'approve' });
    assert.equal(refused.status, 409);
    const body = await json<{ error: string; results: Array<{ status: string; error?: string }> }>(refused);
    assert.match(body.error, /nothing was decided/);
    assert.deepEqual(
      body.results.map((r) => r.status),
      ['ok', 'ok', 'error'],
    );
    assert.equal((await json(await env.k.request(`/api/approvals/${a}`))).status, 'pending', 'nothing changed');
    const done = await json<{ results: Array<{ id: string; decision: string }>; resolved: number }>(
      await post(env, '/api/approvals/batch', { ids: [a, b], decision: 'approve' }),
    );
    assert.equal(done.resolved, 2);
    assert.deepEqual(
      done.results.map((r) => r.decision),
      ['approved', 'approved'],
    );
    assert.equal((await post(env, '/api/approvals/batch', { ids: [], decision: 'approve' })).status, 400);
    assert.equal((await post(env, '/api/approvals/batch', { ids: [a], decision: 'maybe' })).status, 400);
  });

  test('audit lists every decision with its maker', async () => {
    const res = await env.k.request(`/api/approvals/audit?agent_id=${agentId}&limit=5`);
    const audit = await json<{ items: Array<{ decision: string; decided_by: string | null; second_factor_used: boolean }>; total: number; limit: number }>(res);
    assert.equal(audit.limit, 5);
    assert.ok(audit.total >= 10);
    assert.equal(audit.items[0].decision, 'approved');
    assert.equal(audit.items[0].second_factor_used, false);
    assert.equal((await env.k.request('/api/approvals/audit?agent_id=zz')).status, 400);
  });

  test('TOTP: setup, confirm, enforced approval, replay refused, revoke', async () => {
    const status0 = await json(await env.k.request('/api/approvals/totp/status'));
    assert.deepEqual(status0, { enrolled: false, confirmed: false, enforced: false, remaining_recovery_codes: 0 });
    assert.equal((await env.k.request('/api/approvals/totp', { method: 'DELETE', json: { code: '123456' } })).status, 400, 'not enrolled');
    const setup = await json<{ secret: string; otpauth_uri: string; qr_code: string; recovery_codes: string[] }>(await post(env, '/api/approvals/totp/setup'));
    assert.match(setup.otpauth_uri, /^otpauth:\/\/totp\/Talon:operator\?secret=/);
    assert.match(setup.qr_code, /^data:image\/png;base64,/);
    assert.equal(setup.recovery_codes.length, 8);
    assert.match(setup.recovery_codes[0], /^[0-9a-f]{4}(-[0-9a-f]{4}){3}$/);
    assert.equal((await json(await env.k.request('/api/approvals/totp/status'))).confirmed, false);
    assert.equal((await post(env, '/api/approvals/totp/confirm', { code: '000000' })).status, 400);
    assert.equal((await post(env, '/api/approvals/totp/confirm', {})).status, 400);
    assert.equal((await post(env, '/api/approvals/totp/confirm', { code: await code(setup.secret) })).status, 200);
    assert.deepEqual(await json(await env.k.request('/api/approvals/totp/status')), {
      enrolled: true,
      confirmed: true,
      enforced: false,
      remaining_recovery_codes: 8,
    });

    await setConfig(env.k, 'approval.second_factor', 'totp');
    assert.equal((await json(await env.k.request('/api/approvals/totp/status'))).enforced, true);
    const id = (await create()).id;
    const missing = await post(env, `/api/approvals/${id}/approve`);
    assert.equal(missing.status, 400);
    assert.match((await json<{ error: string }>(missing)).error, /totp_code is required/);
    assert.equal((await post(env, `/api/approvals/${id}/approve`, { totp_code: '999999' })).status, 400);
    const next = await code(setup.secret, 1);
    const ok = await post(env, `/api/approvals/${id}/approve`, { totp_code: next });
    assert.equal(ok.status, 200);
    const id2 = (await create()).id;
    const replay = await post(env, `/api/approvals/${id2}/approve`, { totp_code: next });
    assert.equal(replay.status, 400, 'an accepted code is spent');
    assert.equal((await post(env, `/api/approvals/${id2}/reject`)).status, 200, 'rejecting needs no second factor');
    const trail = await json<{ items: Array<{ request_id: string; second_factor_used: boolean }> }>(await env.k.request('/api/approvals/audit'));
    assert.equal(trail.items.find((i) => i.request_id === id)!.second_factor_used, true);

    const revoke = await env.k.request('/api/approvals/totp', { method: 'DELETE', json: { code: setup.recovery_codes[3] } });
    assert.equal(revoke.status, 200);
    assert.equal((await json(await env.k.request('/api/approvals/totp/status'))).enrolled, false);
    const id3 = (await create()).id;
    assert.equal((await post(env, `/api/approvals/${id3}/approve`, { totp_code: next })).status, 400, 'enforced without enrollment');
    await setConfig(env.k, 'approval.second_factor', 'none');
    await post(env, `/api/approvals/${id3}/reject`);
  });

  test('POST /api/approvals/totp/revoke is the same as DELETE', async () => {
    const setup = await json<{ secret: string; recovery_codes: string[] }>(await post(env, '/api/approvals/totp/setup'));
    assert.equal((await post(env, '/api/approvals/totp/revoke', { code: 'not-a-code' })).status, 400);
    assert.equal((await post(env, '/api/approvals/totp/revoke', { code: setup.recovery_codes[0] })).status, 200);
  });

  test('timeout_fallback = "escalate": the request is announced again and waits longer, then is denied after max_escalations', async () => {
    for (const [key, value] of Object.entries({ timeout_secs: 1, timeout_fallback: 'escalate', escalate_extra_secs: 1, max_escalations: 1 }))
      await setConfig(env.k, `approval.${key}`, value);
    const announced: string[] = [];
    const scope = eventChannel(env.k.kernel.events, approvalEvents);
    scope.subscribe('approval.requested', (e) => void announced.push(e.data.description ?? ''));
    try {
      const { id } = await create();
      await waitFor(async () => (await json(await env.k.request(`/api/approvals/${id}`))).status === 'expired', 6000, 'expiry after the escalation');
      const trail = await json<{ items: Array<{ request_id: string; decision: string; decided_by: string | null }> }>(
        await env.k.request('/api/approvals/audit'),
      );
      assert.deepEqual(
        trail.items.filter((i) => i.request_id === id).map((i) => `${i.decision}:${i.decided_by}`),
        ['expired:timeout', 'escalated:timeout', 'requested:null'],
      );
      assert.deepEqual(announced, ['ship it', '[escalation 1] ship it']);
    } finally {
      scope.close();
      await setConfig(env.k, 'approval.timeout_fallback', 'deny');
      await setConfig(env.k, 'approval.timeout_secs', 60);
    }
  });

  test('GET /api/approvals/stream sends requests and decisions as they happen', async () => {
    const ac = new AbortController();
    const res = await env.k.request('/api/approvals/stream', { signal: ac.signal });
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    let text = '';
    const id = (await create()).id;
    await post(env, `/api/approvals/${id}/reject`);
    const deadline = Date.now() + 3000;
    while (!text.includes('event: approval.resolved') && Date.now() < deadline) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    assert.match(text, new RegExp(`event: approval.requested\ndata: \\{"approvalId":"${id}"`));
    assert.match(text, new RegExp(`event: approval.resolved\ndata: \\{"approvalId":"${id}","status":"rejected","decidedBy":"api"`));
  });
});
