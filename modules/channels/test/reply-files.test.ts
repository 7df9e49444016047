/**
 * The files a turn's tools made (TurnResult.files) go out with the reply: uploads where the channel takes them and
 * they fit; otherwise a note naming the file and saying why (never a relative /api/uploads link a chat user cannot open).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { StoredFile, UploadFiles } from '@talon/agents';
import { startAgentTestKernel, type AgentTestKernel } from '@talon/testing';
import { MAX_OUTBOUND_MEDIA_BYTES, placeMedia, replyMedia, sizeText } from '../services/media.ts';
import { configure, fixtures, inject, sent, until } from './helpers.ts';

const AGENT_FIXTURES = path.resolve(import.meta.dirname, '../../agents/test/fixtures');

describe('files a reply carries, through a running channel', () => {
  let k: AgentTestKernel;
  before(async () => {
    k = await startAgentTestKernel({
      only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'channels', 'channel-fake', 'file-tools'],
      config: `module_paths = [${JSON.stringify(fixtures)}, ${JSON.stringify(AGENT_FIXTURES)}]\n`,
    });
    await k.spawnAgent('painter', { capabilities: { tools: ['make_image'] } });
    assert.equal((await configure(k, { token: 't', agent_name: 'painter', dm_policy: 'open' })).status, 200);
  });
  after(() => k?.stop());

  /** The reply's chunks, once its file went out (an upload, or the link in the text). */
  const replyTo = (platformId: string) =>
    until(async () => {
      const chunks = (await sent(k)).filter((s) => s.replyTo === platformId);
      return (chunks.some((c) => c.media) || /dashboard$/.test(chunks.at(-1)?.text ?? '')) && chunks;
    }, 'the reply with its file');
  const setMedia = (media: boolean) => k.request('/api/test-fake/media', { method: 'POST', json: { media } });

  test('on a channel that takes uploads, each file is an upload of its own after the text, its bytes from the store', async () => {
    await setMedia(true);
    k.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'sunset' } }] }, { text: 'Done.' });
    await inject(k, { platformId: 'u1', chatId: 'files', text: 'paint a sunset' });
    const chunks = await replyTo('u1');
    assert.deepEqual(
      chunks.map((c) => [c.text, c.media && { ...c.media, data: '' }]),
      [
        ['Done.', undefined],
        ['', { name: 'sunset.png', mediaType: 'image/png', data: '' }],
      ],
    );
    // The agents fixture's make_image stores a 1×1 PNG of 70 bytes; the upload carries exactly those bytes.
    const png = Buffer.from(chunks[1].media?.data ?? '', 'base64');
    assert.equal(png.length, 70);
    assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG signature');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1, 1], 'the 1×1 image of the fixture');
  });

  test('on a channel without uploads, each file is a note naming it (type, size) and where to open it, not a relative link', async () => {
    await setMedia(false);
    k.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'moon' } }] }, { text: 'Done.' });
    await inject(k, { platformId: 'l1', chatId: 'links', text: 'paint the moon' });
    const chunks = await replyTo('l1');
    assert.ok(chunks.every((c) => !c.media));
    // The fake channel's messages hold 50 characters: the note comes in several, split at spaces.
    const text = chunks.map((c) => c.text).join(' ');
    assert.equal(text.replace(/\s+/g, ' '), "Done. moon.png (image/png, 70 bytes) — this channel takes no files; open it in Talon's dashboard");
    assert.doesNotMatch(text, /\/api\/uploads/);
  });
});

describe('replyMedia: which reply files go out as uploads', () => {
  const file = (size: number, name = 'clip.mp4'): StoredFile => ({
    file_id: randomUUID(),
    url: '/api/uploads/x',
    content_type: 'video/mp4',
    filename: name,
    size,
  });
  const store = (reads: string[]): Pick<UploadFiles, 'read'> => ({
    read: async (id) => {
      reads.push(id);
      return { bytes: Buffer.from('data'), content_type: 'video/mp4', filename: 'clip.mp4' };
    },
  });

  test("a file over the journal row's cap is a note saying it is too large, its bytes never read", async () => {
    const reads: string[] = [];
    const big = file(MAX_OUTBOUND_MEDIA_BYTES + 1);
    const small = file(4, 'small.mp4');
    const media = await replyMedia([big, small], true, store(reads));
    assert.deepEqual(media.notes, ["clip.mp4 (video/mp4, 20.0 MB) — too large to send here; open it in Talon's dashboard"]);
    assert.deepEqual(media.uploads, [{ name: 'small.mp4', mediaType: 'video/mp4', data: Buffer.from('data').toString('base64') }]);
    assert.deepEqual(reads, [small.file_id]);
    assert.equal(placeMedia('Here.', media.uploads, media.notes).text, `Here.\n${media.notes[0]}`);
  });

  test('a file whose bytes are gone is a note; sizes read as bytes, KB or MB', async () => {
    const gone = await replyMedia([file(3 * 1024 * 1024 + 300)], true, { read: async () => undefined });
    assert.deepEqual(gone, { uploads: [], notes: ['clip.mp4 (video/mp4, 3.0 MB) — no longer stored'] });
    assert.deepEqual([sizeText(1), sizeText(1023), sizeText(1536), sizeText(5 * 1024 * 1024)], ['1 byte', '1023 bytes', '2 KB', '5.0 MB']);
  });
});
