import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { configure, inject, sent, startChannels, until } from './helpers.ts';

const kernels: AgentTestKernel[] = [];
after(() => Promise.all(kernels.map((k) => k.stop())));

async function ready(): Promise<AgentTestKernel> {
  const k = await startChannels();
  kernels.push(k);
  await k.spawnAgent('helper');
  assert.equal((await configure(k, { token: 't', agent_name: 'helper', dm_policy: 'open' })).status, 200);
  return k;
}

/** The chunks answering one message, once there are some. */
const answering = async (k: AgentTestKernel, id: string) => {
  const chunks = (await sent(k)).filter((s) => s.replyTo === id);
  return chunks.length ? chunks : undefined;
};

const REPLY = 'Use **bold** & <b>x</b>';

test('each chunk is rendered to the format the adapter declares, with its plain text alongside', async () => {
  const k = await ready();
  const expected = {
    telegram_html: 'Use <b>bold</b> &amp; &lt;b&gt;x&lt;/b&gt;',
    slack_mrkdwn: 'Use *bold* &amp; &lt;b&gt;x&lt;/b&gt;',
    plain: 'Use bold & <b>x</b>',
    markdown: REPLY,
  };
  for (const [i, [format, text]] of Object.entries(expected).entries()) {
    assert.equal((await k.request('/api/test-fake/format', { method: 'POST', json: { format } })).status, 200);
    k.fake.enqueue({ text: REPLY });
    await inject(k, { platformId: `f${i}`, text: `say it in ${format}` });
    const [chunk] = await until(() => answering(k, `f${i}`), `${format} reply sent`);
    assert.equal(chunk.text, text, format);
    assert.equal(chunk.plain, 'Use bold & <b>x</b>', `${format}: the plain alternative`);
  }
});

test('plain text is rendered before it is chunked: the limit counts the text that goes out', async () => {
  const k = await ready();
  // The link goes out as `text (url)`: chunked as Markdown, the chunks would be counted (and sent) with its syntax.
  const link = `[${'a'.repeat(18)}](https://example.com/${'p'.repeat(50)})`;
  k.fake.enqueue({ text: `**${'b'.repeat(20)}** ${link}` });
  await inject(k, { platformId: 'long', text: 'a link please' });
  await until(async () => {
    const rows = await k.kernel.store.many<{ state: string }>("SELECT state FROM channels_outbound WHERE chat_id = 'c1'");
    return rows.length > 0 && rows.every((r) => r.state === 'sent');
  }, 'every chunk sent');
  const all = (await answering(k, 'long')) ?? [];
  assert.ok(all.length >= 2);
  assert.ok(
    all.every((c) => c.text.length <= 50 && !c.text.includes('**') && !c.text.includes('](')),
    JSON.stringify(all),
  );
});

test('typing is shown when the turn starts and stops when the turn throws', async () => {
  const k = await ready();
  // A turn that runs past one refresh (4 s) and then fails: the provider refuses the request.
  k.fake.enqueue({ status: 400, delayMs: 4_500 });
  const t0 = Date.now();
  await inject(k, { platformId: 'boom', text: 'fail please' });
  await until(
    async () => (await k.kernel.store.one<{ state: string }>("SELECT state FROM channels_inbound WHERE platform_id = 'boom'"))?.state === 'failed',
    'the turn failed',
  );
  const during = ((await (await k.request('/api/test-fake/typing')).json()) as { typing: number[] }).typing.filter((t) => t >= t0);
  assert.ok(during.length >= 2, `shown at the start and refreshed: ${during.length}`);
  await new Promise((r) => setTimeout(r, 4_500));
  const later = ((await (await k.request('/api/test-fake/typing')).json()) as { typing: number[] }).typing.filter((t) => t >= t0);
  assert.equal(later.length, during.length, 'no typing after the turn ended');
});
