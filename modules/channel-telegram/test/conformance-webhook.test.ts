// The shared channel conformance suite for the Telegram adapter in webhook mode: the Bot API fake POSTs each update
// to the kernel's webhook route, with the secret given in setWebhook.
import { channelConformance } from '@talon/testing';
import { MODULES } from './helpers.ts';
import { telegramHarness } from './harness.ts';

channelConformance({
  name: 'channel-telegram (webhook mode)',
  channel: 'telegram',
  only: MODULES,
  limits: { maxLength: 4096, unit: 'utf16' },
  harness: (kernel) => telegramHarness({ webhook: kernel }),
});
