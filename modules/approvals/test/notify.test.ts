import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@talon/module-sdk/testing';
import { json, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

describe('approvals: humans are told', () => {
  let env: Env;
  const pushed: Array<{ topic: string; title: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      pushed.push({ topic: (req.url ?? '').slice(1), title: String(req.headers.title), body });
      res.writeHead(200).end();
    });
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const ntfy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    env = await startEnv(`[pairing]\nenabled = true\npush_provider = "ntfy"\nntfy_url = "${ntfy}"\nallow_hosts = ["127.0.0.1"]\n`, ['pairing']);
  });
  after(async () => {
    await stopEnv(env);
    server.close();
  });

  test('a new request is pushed to the paired devices, with how to decide it', async () => {
    const code = await json<{ pairing_code: string }>(await env.k.request('/api/pairing/request', { method: 'POST' }));
    await env.k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code.pairing_code, push_token: 'owner-phone' } });
    const agentId = await spawn(env.k, 'pusher');
    const res = await env.k.request('/api/approvals', { method: 'POST', json: { agent_id: agentId, action: 'deploy', description: 'pusher wants to deploy' } });
    const { id } = await json<{ id: string }>(res);
    const got = (await waitFor(() => pushed.find((p) => p.body.includes(id)), 3000, 'the push'))!;
    assert.equal(got.topic, 'owner-phone');
    assert.equal(got.title, 'Approval needed');
    assert.match(got.body, /pusher wants to deploy/);
    assert.match(got.body, new RegExp(`POST /api/approvals/${id}/approve`));
  });
});
