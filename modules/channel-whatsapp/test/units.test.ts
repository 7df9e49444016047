// The adapter's pure rules: Graph errors as ChannelError kinds, where the token may go for a file, which message type
// carries a file, and what of a webhook payload is heard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RATE_WAIT_MS, toChannelError } from '../services/errors.ts';
import { readPayload } from '../services/inbound.ts';
import { mediaUrlProblem, messageTypeOf } from '../services/media.ts';

const graph = (code: number, message = 'x') => ({ error: { message, type: 'OAuthException', code } });

test('Graph errors map to ChannelError kinds', () => {
  assert.equal(toChannelError(401, graph(190), undefined).kind, 'auth');
  assert.equal(toChannelError(400, graph(190), undefined).kind, 'auth', 'an expired token (190) is auth whatever the status');
  const limited = toChannelError(400, graph(130429), undefined);
  assert.deepEqual([limited.kind, limited.retryAfterMs], ['rate_limited', RATE_WAIT_MS]);
  assert.equal(toChannelError(429, undefined, 7_000).retryAfterMs, 7_000, 'a Retry-After is honoured');
  assert.equal(toChannelError(400, graph(131056), undefined).kind, 'rate_limited', 'pair rate limit');
  assert.equal(toChannelError(400, graph(131047, 'Re-engagement message'), undefined).kind, 'permanent', 'outside the 24-hour window');
  assert.equal(toChannelError(503, undefined, undefined).kind, 'transient');
});

test("the token goes only to Meta's media hosts over https, or to the configured api_url's origin", () => {
  const root = 'https://graph.facebook.com/v21.0';
  assert.equal(mediaUrlProblem('https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1', root), undefined);
  assert.match(mediaUrlProblem('http://lookaside.fbsbx.com/x', root) ?? '', /https/);
  assert.match(mediaUrlProblem('https://evil.example/fbsbx.com', root) ?? '', /not a WhatsApp media host/);
  assert.match(mediaUrlProblem('https://fbsbx.com.evil.example/x', root) ?? '', /not a WhatsApp media host/);
  assert.equal(mediaUrlProblem('http://127.0.0.1:9/media/1', 'http://127.0.0.1:9/v21.0'), undefined);
  assert.ok(mediaUrlProblem('http://127.0.0.1:10/media/1', 'http://127.0.0.1:9/v21.0'));
});

test('files go as the message type WhatsApp shows them as', () => {
  assert.equal(messageTypeOf('image/png'), 'image');
  assert.equal(messageTypeOf('image/webp'), 'document', 'webp is a sticker type, not an image message');
  assert.equal(messageTypeOf('audio/ogg; codecs=opus'), 'audio', 'voice notes are Ogg/Opus audio');
  assert.equal(messageTypeOf('video/mp4'), 'video');
  assert.equal(messageTypeOf('application/pdf'), 'document');
});

test("only this number's messages are heard; statuses and other numbers' changes are not", () => {
  const value = (id: string, extra: Record<string, unknown>) => ({ field: 'messages', value: { metadata: { phone_number_id: id }, ...extra } });
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          value('111', {
            contacts: [{ wa_id: '49', profile: { name: 'Ann' } }],
            messages: [
              { from: '49', id: 'wamid.a', timestamp: '1700000000', type: 'text', text: { body: 'hi' } },
              { from: '49', id: 'wamid.r', timestamp: '1700000000', type: 'reaction', reaction: { emoji: '👍' } },
              { from: '49', id: 'wamid.v', timestamp: '1700000000', type: 'audio', audio: { id: '77', mime_type: 'audio/ogg; codecs=opus', voice: true } },
            ],
          }),
          value('222', { messages: [{ from: '50', id: 'wamid.b', timestamp: '1', type: 'text', text: { body: 'not ours' } }] }),
          value('111', { statuses: [{ id: 'wamid.c', status: 'read' }] }),
        ],
      },
    ],
  });
  const read = readPayload(body, '111');
  assert.ok('messages' in read);
  assert.deepEqual(
    read.messages.map((m) => [m.message.platformId, m.message.senderName, m.message.text, m.media?.id]),
    [
      ['wamid.a', 'Ann', 'hi', undefined],
      ['wamid.v', 'Ann', '', '77'],
    ],
  );
  assert.equal(read.messages[0]!.message.sentAt, '2023-11-14T22:13:20.000Z');
});

test('a timestamp past the last date JavaScript has is dropped, the message still read (it threw, answered 500)', () => {
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          {
            field: 'messages',
            value: { metadata: { phone_number_id: '111' }, messages: [{ from: '49', id: 'wamid.t', timestamp: '1e300', type: 'text', text: { body: 'hi' } }] },
          },
        ],
      },
    ],
  });
  const read = readPayload(body, '111');
  assert.ok('messages' in read);
  assert.equal(read.messages.length, 1);
});
