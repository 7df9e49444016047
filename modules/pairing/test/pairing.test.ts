import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startTestKernel, type TestKernel } from '@talon/testing';
import type { PairedDevices } from '@talon/pairing';

const API_KEY = 'admin-key-for-pairing-tests-1';
const admin = { authorization: `Bearer ${API_KEY}` };
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

/** A push server on 127.0.0.1 (ntfy's wire format: POST /<topic>, body = message, Title header). */
function pushServer(answer: (topic: string) => number) {
  const got: Array<{ topic: string; title: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const topic = decodeURIComponent((req.url ?? '').slice(1));
      got.push({ topic, title: String(req.headers.title), body });
      res.writeHead(answer(topic)).end();
    });
  });
  return { got, server };
}

describe('pairing', () => {
  let k: TestKernel;
  const push = pushServer((topic) => (topic === 'broken' ? 500 : 200));
  let devices: PairedDevices;
  const request = (path: string, init: RequestInit & { json?: unknown } = {}) => k.request(path, { ...init, headers: { ...admin, ...(init.headers ?? {}) } });

  before(async () => {
    await new Promise<void>((r) => push.server.listen(0, '127.0.0.1', () => r()));
    const port = (push.server.address() as AddressInfo).port;
    k = await startTestKernel({
      only: ['pairing', 'auth', 'error-envelope'],
      config: `api_key = "${API_KEY}"\n[pairing]\nenabled = true\nmax_devices = 3\npush_provider = "ntfy"\nntfy_url = "http://127.0.0.1:${port}"\nntfy_topic = "shared"\nallow_hosts = ["127.0.0.1"]\npublic_base_url = "https://talon.example"\n`,
    });
    devices = k.kernel.services.view<PairedDevices>('pairing.devices');
  });
  after(async () => {
    await k.stop();
    push.server.close();
  });

  const pair = async (extra: Record<string, unknown> = {}) => {
    const code = await json<{ pairing_code: string; expires_at: string; qr_uri: string }>(await request('/api/pairing/request', { method: 'POST' }));
    const res = await k.request('/api/pairing/complete', {
      method: 'POST',
      json: { pairing_code: code.pairing_code, display_name: 'phone', platform: 'android', ...extra },
    });
    assert.equal(res.status, 200, 'complete needs no admin key');
    return { code, device: await json<{ device_id: string; token: string; role: string }>(res) };
  };

  test('request → code with expiry and a QR URI; complete → a device token shown once, scoped to the user role', async () => {
    const { code, device } = await pair();
    assert.match(code.pairing_code, /^[0-9a-f]{64}$/);
    assert.ok(Date.parse(code.expires_at) - Date.now() > 200_000);
    const payload = JSON.parse(Buffer.from(code.qr_uri.split('payload=')[1], 'base64url').toString());
    assert.deepEqual(payload, { v: 1, base_url: 'https://talon.example', code: code.pairing_code, expires_at: code.expires_at });
    assert.match(device.token, /^tdev_[0-9a-f]{64}$/);
    assert.equal(device.role, 'user');
    const principal = devices.authenticate({ authorization: `Bearer ${device.token}` });
    assert.deepEqual(principal, { subject: `device:${device.device_id}`, role: 'user', via: 'device', deviceId: device.device_id });
    const list = await json<{ devices: Array<Record<string, unknown>> }>(await request('/api/pairing/devices'));
    const listed = list.devices.find((d) => d.device_id === device.device_id)!;
    assert.equal(listed.display_name, 'phone');
    assert.ok(!JSON.stringify(list).includes(device.token));
    // Single use.
    const again = await k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code.pairing_code } });
    assert.equal(again.status, 410);
    // Over HTTP the token is recognised as a user: the pairing endpoints are for administrators (403, not 401).
    const asDevice = () => k.request('/api/pairing/devices', { headers: { authorization: `Bearer ${device.token}` } });
    assert.equal((await asDevice()).status, 403);
    // Removing the device revokes its token at once.
    assert.equal((await request(`/api/pairing/devices/${device.device_id}`, { method: 'DELETE' })).status, 204);
    assert.equal(devices.authenticate({ authorization: `Bearer ${device.token}` }), undefined);
    assert.equal((await asDevice()).status, 401);
    assert.equal((await request(`/api/pairing/devices/${device.device_id}`, { method: 'DELETE' })).status, 404);
  });

  test('an expired code is refused; the device limit holds; bad input is 4xx', async () => {
    const code = await json<{ pairing_code: string }>(await request('/api/pairing/request', { method: 'POST' }));
    await k.kernel.store.run('UPDATE pairing_codes SET expires_at = 1');
    assert.equal((await k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code.pairing_code } })).status, 410);
    assert.equal((await k.request('/api/pairing/complete', { method: 'POST', json: {} })).status, 400);
    assert.equal((await k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: 'nope' } })).status, 410);
    assert.equal((await request('/api/pairing/devices/bad-id', { method: 'DELETE' })).status, 400);
    assert.equal((await request(`/api/pairing/devices/${randomUUID()}`, { method: 'DELETE' })).status, 404);
    assert.equal((await k.request('/api/pairing/request', { method: 'POST' })).status, 401, 'requesting a code needs the admin key');
    for (const d of (await json<{ devices: Array<{ id: string }> }>(await request('/api/pairing/devices'))).devices)
      await request(`/api/pairing/devices/${d.id}`, { method: 'DELETE' });
    for (let i = 0; i < 3; i++) await pair();
    const code4 = await json<{ pairing_code: string }>(await request('/api/pairing/request', { method: 'POST' }));
    const fourth = await k.request('/api/pairing/complete', { method: 'POST', json: { pairing_code: code4.pairing_code } });
    assert.equal(fourth.status, 410);
    assert.match((await json<{ error: string }>(fourth)).error, /max_devices/);
  });

  test('notify pushes to every device topic and counts the successful sends', async () => {
    for (const d of (await json<{ devices: Array<{ id: string }> }>(await request('/api/pairing/devices'))).devices)
      await request(`/api/pairing/devices/${d.id}`, { method: 'DELETE' });
    await pair({ push_token: 'alice-phone' });
    await pair({ push_token: 'broken' });
    await pair();
    push.got.length = 0;
    const res = await json(await request('/api/pairing/notify', { method: 'POST', json: { message: 'build done', title: 'CI' } }));
    assert.deepEqual({ sent: res.sent, failed: res.failed, devices: res.devices, ok: res.ok }, { sent: 2, failed: 1, devices: 3, ok: false });
    assert.deepEqual(push.got.map((g) => g.topic).sort(), ['alice-phone', 'broken', 'shared']);
    assert.equal(push.got[0].body, 'build done');
    assert.equal(push.got[0].title, 'CI');
    assert.equal((await request('/api/pairing/notify', { method: 'POST', json: {} })).status, 400);
  });
});

describe('pairing: off by default', () => {
  test('every route answers 404 naming the setting; the service authenticates nobody', async () => {
    const k = await startTestKernel({ only: ['pairing', 'error-envelope'] });
    try {
      for (const [method, path] of [
        ['POST', '/api/pairing/request'],
        ['POST', '/api/pairing/complete'],
        ['GET', '/api/pairing/devices'],
        ['POST', '/api/pairing/notify'],
      ]) {
        const res = await k.request(path, { method });
        assert.equal(res.status, 404, path);
        assert.match((await json<{ error: string }>(res)).error, /\[pairing\] enabled = true/);
      }
    } finally {
      await k.stop();
    }
  });
});
