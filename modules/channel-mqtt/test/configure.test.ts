/**
 * Configuring the MQTT channel (no broker needed): a url carrying user:password@ is refused with a 400 naming the field
 * and saying where the account goes, nothing is stored, and the password is not echoed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-mqtt'] });
});
after(async () => {
  await k?.stop();
});

const configure = (url: string) => k.request('/api/channels/mqtt/configure', { method: 'POST', json: { url, topic_in: 'talon/in', topic_out: 'talon/out' } });

test('a url with user:password@ is a 400 naming url and pointing to username and token; nothing is stored', async () => {
  for (const url of ['mqtt://bot:s3cret-pw@127.0.0.1:1883', 'ws://bot@127.0.0.1:1/mqtt', 'mqtts://:s3cret-pw@127.0.0.1:1']) {
    const res = await configure(url);
    const body = await res.text();
    assert.equal(res.status, 400, `${url}: ${body}`);
    const { error } = JSON.parse(body) as { error: string };
    assert.match(error, /field 'url'/);
    assert.match(error, /'username'/);
    assert.match(error, /'token'/);
    assert.ok(!error.includes('s3cret-pw'), error);
  }
  const shown = await (await k.request('/api/channels/mqtt')).text();
  assert.ok(!shown.includes('s3cret-pw'), shown);
  assert.ok(!shown.includes('127.0.0.1:1883'), 'no configuration stored');
});

test('a url without credentials (an @ in its path is no user) is taken', async () => {
  // (Port 1 on loopback: the adapter's connection is refused at once, nothing leaves the machine.)
  const res = await configure('ws://127.0.0.1:1/mqtt@edge');
  assert.equal(res.status, 200, await res.text());
});
