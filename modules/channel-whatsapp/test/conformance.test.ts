// The shared channel conformance suite for the WhatsApp adapter (Cloud API mode): the fake Graph API POSTs signed
// webhooks into the running kernel's route (again until a 2xx); replies and uploads go to the fake's Graph API.
import { channelConformance, startWhatsAppFake, type WhatsAppFake } from '@talon/testing';
import { WEBHOOK_ROUTE } from '../config.ts';
import { configureFor, MODULES } from './helpers.ts';

const number = (n: number) => `4915100000${String(n).padStart(3, '0')}`;

channelConformance({
  name: 'channel-whatsapp (cloud mode)',
  channel: 'whatsapp',
  only: MODULES,
  limits: { maxLength: 4096, unit: 'utf16' },
  async harness(kernel) {
    const fake: WhatsAppFake = await startWhatsAppFake();
    // The kernel starts after the harness: the callback URL is set on the first message, as an app's is once it runs.
    const inject = (message: Parameters<WhatsAppFake['injectMessage']>[0]) => {
      fake.deliverTo(kernel().url + WEBHOOK_ROUTE);
      fake.injectMessage(message);
    };
    return {
      configure: configureFor(fake),
      badCredentials: { token: 'EAAG-refused-by-meta-token' },
      noGroups: 'a WhatsApp Business Cloud API number talks one to one: it cannot be added to groups',
      group() {
        throw new Error('a WhatsApp Cloud API number has no groups');
      },
      dm: (n, text) => inject({ from: number(n), text }),
      dmMedia: (n, file, text) =>
        inject({ from: number(n), text, media: { mediaType: file.mediaType, data: file.data, ...(file.name ? { name: file.name } : {}) } }),
      receivedMedia: ({ dm }) => fake.filesTo(number(dm)),
      dmChat: number,
      received: (target) => fake.sent.filter((m) => 'dm' in target && m.to === number(target.dm)).map((m) => m.text ?? m.caption ?? ''),
      rateLimitOnce: () => fake.rateLimitNext(),
      // No dropConnection: messages come by webhook, nothing stays open to drop; an unanswered delivery comes again
      // (webhook.test.ts).
      stop: () => fake.stop(),
    };
  },
});
