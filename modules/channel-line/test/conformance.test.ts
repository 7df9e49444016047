// The shared channel conformance suite for the LINE adapter: the Messaging API fake POSTs signed webhooks to the
// kernel's route (reached through the harness's kernel() accessor) and takes the pushes.
import { channelConformance } from '@talon/testing';
import { lineHarness, MODULES } from './harness.ts';

channelConformance({
  name: 'channel-line',
  channel: 'line',
  only: MODULES,
  limits: { maxLength: 5000, unit: 'utf16' },
  harness: (kernel) => lineHarness(kernel),
});
