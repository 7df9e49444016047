// The adapter on its own against the Bot API fake, with a context built here (the kit and net's fetch of a running
// kernel, an emit the test controls): the offset moves only past committed updates, files go out and come in intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentTestKernel, startTelegramFake, type AgentTestKernel, type TelegramFake } from '@talon/testing';
import { channelKit, type AdapterContext, type ChannelConnection, type ChannelKit, type EmitResult, type InboundMessage } from '@talon/channels';
import { telegramAdapter } from '../services/adapter.ts';
import { MAX_MEDIA_BYTES } from '../services/inbound.ts';
import { MODULES, until } from './helpers.ts';

type NetLike = { fetch(r: Parameters<AdapterContext['fetch']>[0] & { allowOrigins: readonly string[] }): ReturnType<AdapterContext['fetch']> };

let k: AgentTestKernel;
let tg: TelegramFake;
before(async () => {
  k = await startAgentTestKernel({ only: MODULES });
  tg = await startTelegramFake();
});
after(async () => {
  await k?.stop();
  await tg?.stop();
});

const kit = () => k.kernel.services.view<ChannelKit>(channelKit.id);

/** Starts the adapter with `emit` as the journal; answers the connection and a stop for the test's finally. */
async function start(emit: (m: InboundMessage) => Promise<EmitResult>, reports: string[] = []) {
  const controller = new AbortController();
  const origin = new URL(tg.apiRoot).host;
  const net = k.kernel.services.view<NetLike>('net.fetch');
  const quiet = { info() {}, warn() {}, error() {} };
  const ctx: AdapterContext = {
    channel: 'telegram',
    config: { api_url: tg.apiRoot },
    secrets: { token: tg.token },
    emit,
    report: (state, error) => void reports.push(`${state}${error ? `: ${error}` : ''}`),
    fetch: (r) => net.fetch({ ...r, allowOrigins: [origin], signal: r.signal ? AbortSignal.any([r.signal, controller.signal]) : controller.signal }),
    allowOrigins: [origin],
    log: quiet,
    signal: controller.signal,
  };
  const connection: ChannelConnection = await telegramAdapter(kit).start(ctx);
  return {
    connection,
    async stop() {
      controller.abort();
      await connection.stop();
    },
  };
}

test('the offset moves past an update only once emit resolved: a failed commit gets the update again', async () => {
  const seen: string[] = [];
  let failures = 1;
  const run = await start(async (m) => {
    seen.push(m.text);
    if (m.text === 'second' && failures-- > 0) throw new Error('database is locked');
    return { duplicate: false };
  });
  try {
    const first = tg.injectMessage({ chat: { id: 11, type: 'private' }, text: 'first' });
    const second = tg.injectMessage({ chat: { id: 11, type: 'private' }, text: 'second' });
    await until(() => seen.filter((t) => t === 'second').length === 2, 'the second update delivered again');
    await until(() => tg.pending().length === 0, 'both confirmed');
    assert.deepEqual(seen, ['first', 'second', 'second']);
    const offsets = tg.callsOf('getUpdates').map((c) => Number(c.params.offset ?? 0));
    // No poll confirmed the second update before its emit resolved: the poll right after the failure asked from it.
    assert.ok(offsets.includes(second.update_id), `offsets ${offsets.join(',')}`);
    assert.ok(offsets.includes(first.update_id + 1));
  } finally {
    await run.stop();
  }
});

test('an inbound file is downloaded intact through the adapter fetch; files go out as sendPhoto and sendDocument', async () => {
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i)); // every byte value: a text body would mangle them
  const got: InboundMessage[] = [];
  const run = await start(async (m) => {
    got.push(m);
    return { duplicate: false };
  });
  try {
    tg.injectMessage({ chat: { id: 12, type: 'private' }, caption: 'raw', document: { name: 'raw.bin', type: 'application/octet-stream', content: bytes } });
    await until(() => got.length === 1, 'the message');
    assert.equal(got[0]!.media?.[0]?.name, 'raw.bin');
    assert.deepEqual(Buffer.from(got[0]!.media![0]!.data!, 'base64'), bytes);
    assert.doesNotMatch(JSON.stringify(got[0]), new RegExp(tg.token), 'no file URL with the token reaches the agent');

    const base = { chatId: '12', text: '<b>chart</b>', plain: 'chart', nonce: 'n1' };
    const photo = await run.connection.send({ ...base, media: { mediaType: 'image/png', name: 'chart.png', data: bytes.toString('base64') } });
    const doc = await run.connection.send({
      ...base,
      nonce: 'n2',
      media: { mediaType: 'application/pdf', name: 'report.pdf', data: bytes.toString('base64') },
    });
    assert.match(photo.messageId, /^12:\d+$/);
    assert.match(doc.messageId, /^12:\d+$/);
    const [sentPhoto, sentDoc] = [tg.callsOf('sendPhoto').at(-1)!, tg.callsOf('sendDocument').at(-1)!];
    assert.deepEqual((sentPhoto.params.photo as { content: Buffer }).content, bytes);
    assert.equal((sentDoc.params.document as { name: string }).name, 'report.pdf');
    assert.deepEqual((sentDoc.params.document as { content: Buffer }).content, bytes);
    assert.equal(sentDoc.params.caption, '<b>chart</b>');
    assert.equal(sentDoc.params.parse_mode, 'HTML');
  } finally {
    await run.stop();
  }
});

test('a file over the size cap is named for the agent, not downloaded', async () => {
  const got: InboundMessage[] = [];
  const run = await start(async (m) => {
    got.push(m);
    return { duplicate: false };
  });
  try {
    const asked = tg.callsOf('getFile').length;
    const big = Buffer.alloc(MAX_MEDIA_BYTES + 1, 1);
    tg.injectMessage({ chat: { id: 13, type: 'private' }, caption: 'huge', document: { name: 'huge.bin', type: 'application/octet-stream', content: big } });
    await until(() => got.length === 1, 'the message');
    assert.deepEqual(got[0]!.media, [{ mediaType: 'application/octet-stream', name: 'huge.bin' }]);
    assert.equal(tg.callsOf('getFile').length, asked, 'never fetched');
  } finally {
    await run.stop();
  }
});

test('a 429 on send is a rate_limited ChannelError carrying retry_after', async () => {
  const run = await start(async () => ({ duplicate: false }));
  try {
    tg.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } });
    await assert.rejects(run.connection.send({ chatId: '13', text: 'x', plain: 'x', nonce: 'n' }), (err: Error & { kind?: string; retryAfterMs?: number }) => {
      assert.equal(err.name, 'ChannelError');
      assert.equal(err.kind, 'rate_limited');
      assert.equal(err.retryAfterMs, 7000);
      return true;
    });
  } finally {
    await run.stop();
  }
});
