// A voice reply on WhatsApp Web with the media module running: audio that is not Ogg is converted by its convertAudio
// and goes out as a voice note (Ogg/Opus, ptt). Needs ffmpeg, as the media module's conversion does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { sampleWav, type AgentTestKernel } from '@talon/testing';
import { userJid, type FakeWhatsApp } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { configureWeb, fakeOf, signIn, startWebKernel } from './web-helpers.ts';

const NO_FFMPEG = spawnSync('ffmpeg', ['-version']).status === 0 ? false : 'ffmpeg is not installed (apt-get install ffmpeg)';
let k: AgentTestKernel | undefined;
let fake: FakeWhatsApp;

before(async () => {
  if (NO_FFMPEG) return;
  k = await startWebKernel({ modules: ['media'] });
  fake = fakeOf(k);
  await configureWeb(k);
  await signIn(k);
});
after(() => k?.stop());

test('WAV out is converted by the media module and sent as an Ogg/Opus voice note', { skip: NO_FFMPEG }, async () => {
  const channels = k!.kernel.services.view<{ send(m: object): Promise<{ messageIds: string[] }> }>('channels.service');
  await channels.send({
    channel: 'whatsapp',
    chatId: userJid(1),
    text: '',
    media: [{ mediaType: 'audio/wav', name: 'reply.wav', data: sampleWav(1).toString('base64') }],
  });
  const [sent] = fake.sent.filter((s) => s.jid === userJid(1));
  const content = sent!.content as { audio?: Buffer; mimetype?: string; ptt?: boolean };
  assert.equal(content.mimetype, 'audio/ogg; codecs=opus');
  assert.equal(content.ptt, true);
  assert.equal(Buffer.from(content.audio!).subarray(0, 4).toString(), 'OggS', 'an Ogg stream');
});
