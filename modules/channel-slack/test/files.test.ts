/**
 * The rules that keep the bot token and file bytes where they belong: a URL Slack hands out (an upload_url, a file's
 * url_private) is called with the token only on Slack's hosts over https or the configured api_url's origin, and the
 * WebClient's multipart upload body reaches net as bytes with its boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdapterContext } from '@talon/channels';
import { bridgeFetch, fileUrlAllowed, SLACK_API_URL } from '../services/web.ts';

const FAKE_API = 'http://127.0.0.1:4567/api/';

test('file URLs: Slack over https, or the configured api_url origin; nothing else', () => {
  assert.equal(fileUrlAllowed('https://files.slack.com/upload/v1/abc', SLACK_API_URL), true);
  assert.equal(fileUrlAllowed('https://files.slack.com/files-pri/T1-F1/a.png', SLACK_API_URL), true);
  assert.equal(fileUrlAllowed('http://files.slack.com/upload/v1/abc', SLACK_API_URL), false, 'not over plain http');
  assert.equal(fileUrlAllowed('https://files.slack.com.evil.example/upload', SLACK_API_URL), false);
  assert.equal(fileUrlAllowed('https://evil.example/upload', SLACK_API_URL), false);
  assert.equal(fileUrlAllowed('http://127.0.0.1:4567/upload/v1/abc', SLACK_API_URL), false, 'loopback only when configured');
  assert.equal(fileUrlAllowed('http://127.0.0.1:4567/upload/v1/abc', FAKE_API), true);
  assert.equal(fileUrlAllowed('http://127.0.0.1:4568/upload/v1/abc', FAKE_API), false, 'another port');
  assert.equal(fileUrlAllowed('not a url', FAKE_API), false);
});

function recordingFetch(): { fetch: AdapterContext['fetch']; seen: Array<Parameters<AdapterContext['fetch']>[0]> } {
  const seen: Array<Parameters<AdapterContext['fetch']>[0]> = [];
  return {
    seen,
    fetch: async (request) => {
      seen.push(request);
      return { status: 200, statusText: 'OK', headers: { 'content-type': 'text/plain' }, body: Buffer.from('OK'), truncated: false, finalUrl: request.url };
    },
  };
}

test("the WebClient's fetch refuses an absolute URL outside Slack and the api_url before anything is sent", async () => {
  const { fetch, seen } = recordingFetch();
  const bridged = bridgeFetch(fetch, FAKE_API);
  await assert.rejects(
    bridged('https://evil.example/upload/v1/abc', { method: 'POST', headers: { Authorization: 'Bearer xoxb-secret' }, body: 'x' }),
    /outside Slack/,
  );
  assert.equal(seen.length, 0, 'the token went nowhere');
  await bridged(`${FAKE_API}auth.test`, { method: 'POST', body: '' });
  await bridged('http://127.0.0.1:4567/upload/v1/F1', { method: 'POST', body: 'x' });
  assert.deepEqual(
    seen.map((r) => r.url),
    [`${FAKE_API}auth.test`, 'http://127.0.0.1:4567/upload/v1/F1'],
  );
});

test('a multipart upload body (FormData) is sent as its bytes with the boundary in the content type', async () => {
  const { fetch, seen } = recordingFetch();
  const form = new FormData();
  form.append('body', new Blob([new Uint8Array([0, 1, 2, 255])]), 'Untitled');
  await bridgeFetch(fetch, FAKE_API)('http://127.0.0.1:4567/upload/v1/F2', { method: 'POST', headers: { Authorization: 'Bearer t' }, body: form });
  const sent = seen[0]!;
  const type = sent.headers!['content-type']!;
  assert.match(type, /^multipart\/form-data; boundary=/);
  const parsed = await new Request('http://x/', {
    method: 'POST',
    headers: { 'content-type': type },
    body: new Uint8Array(sent.body as Uint8Array),
  }).formData();
  const file = parsed.get('body') as File;
  assert.deepEqual([...new Uint8Array(await file.arrayBuffer())], [0, 1, 2, 255]);
  assert.equal(sent.headers!.Authorization, 'Bearer t');
});
