// The shared channel conformance suite for the WhatsApp adapter in web mode, WhatsApp Web played by the fake socket at
// Baileys' event seam. The suite configures the channel once its kernel runs; reading `configure` then starts the QR
// sign-in beside it (the phone scans at once), and the channel connects on the account that sign-in stored. Bad
// credentials are a session WhatsApp has logged out (401 on the next connection).
import { channelConformance, waitFor, type AgentTestKernel, type ChannelHarness } from '@talon/testing';
import { BOT_NUMBER, groupJid, userJid, type SentMessage } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { channel, fakeOf, qrStart, qrStatus, WEB_CONFIG, WEB_MODULES } from './web-helpers.ts';

/** Once the channel is configured in web mode: the QR sign-in, scanned, polled until authenticated. */
async function signInOnceConfigured(k: AgentTestKernel): Promise<void> {
  await waitFor(async () => ((await channel(k)).config as { mode?: string } | null)?.mode === 'web' || undefined, 15_000, 'configured in web mode');
  await qrStart(k);
  fakeOf(k).scan();
  await waitFor(async () => (await qrStatus(k)).body.status === 'authenticated' || undefined, 15_000, 'signed in');
}

type ConformanceFile = Awaited<ReturnType<NonNullable<ChannelHarness['receivedMedia']>>>[number];

const fileOf = (s: SentMessage): ConformanceFile | undefined => {
  const c = s.content as { image?: Buffer; document?: Buffer; audio?: Buffer; video?: Buffer; mimetype?: string; fileName?: string };
  const data = c.image ?? c.document ?? c.audio ?? c.video;
  return data ? { mediaType: c.mimetype ?? '', data, ...(c.fileName ? { name: c.fileName } : {}) } : undefined;
};

channelConformance({
  name: 'channel-whatsapp (web mode)',
  channel: 'whatsapp',
  only: WEB_MODULES,
  config: WEB_CONFIG,
  limits: { maxLength: 4096, unit: 'utf16' },
  async harness(kernel) {
    const fake = () => fakeOf(kernel());
    let signing: Promise<void> | undefined;
    return {
      get configure() {
        signing ??= signInOnceConfigured(kernel()).catch((err: unknown) => console.error('the sign-in failed', err));
        return { mode: 'web' };
      },
      get badCredentials() {
        fake().failNext(401);
        return { mode: 'web' };
      },
      dm: (n, text) => void fake().inject({ chat: userJid(n), text }),
      group: (n, text, { mentioned }) =>
        void fake().inject({ chat: groupJid(n), from: userJid(900 + n), text, ...(mentioned ? { mentions: [`${BOT_NUMBER}@s.whatsapp.net`] } : {}) }),
      received: (target) => fake().textsTo('dm' in target ? userJid(target.dm) : groupJid(target.group)),
      typings: (dm) => fake().presences.filter((p) => p.type === 'composing' && p.jid === userJid(dm)).length,
      rateLimitOnce: () => fake().rateLimitNext(),
      dropConnection: () => fake().close(428),
      dmMedia: (n, file, text) =>
        void fake().inject({
          chat: userJid(n),
          text,
          media: {
            kind: file.mediaType.startsWith('image/') ? 'image' : 'document',
            mediaType: file.mediaType,
            data: file.data,
            ...(file.name ? { name: file.name } : {}),
          },
        }),
      receivedMedia: ({ dm }) =>
        fake()
          .sent.filter((s) => s.jid === userJid(dm))
          .flatMap((s) => fileOf(s) ?? []),
      dmChat: userJid,
      stop: async () => void (await signing),
    };
  },
});
