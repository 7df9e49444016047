// The shared channel conformance suite for the Telegram adapter, against the Bot API fake (long polling).
import { channelConformance } from '@talon/testing';
import { MODULES } from './helpers.ts';
import { telegramHarness } from './harness.ts';

channelConformance({
  name: 'channel-telegram',
  channel: 'telegram',
  only: MODULES,
  limits: { maxLength: 4096, unit: 'utf16' },
  harness: () => telegramHarness(),
});
