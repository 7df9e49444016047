// The shared channel conformance suite for the Google Chat adapter: the Chat fake POSTs signed events to the kernel's
// route (reached through the harness's kernel() accessor) and takes spaces.messages.create.
import { channelConformance } from '@talon/testing';
import { googleChatHarness, MODULES } from './harness.ts';

channelConformance({
  name: 'channel-google-chat',
  channel: 'google_chat',
  only: MODULES,
  limits: { maxLength: 4096, unit: 'utf16' },
  harness: (kernel) => googleChatHarness(kernel),
});
