/** Contract of the auto-dream module: the events it publishes. */
import { defineEvents, payload } from '@talon/module-sdk';

export const dreamEvents = defineEvents('auto-dream', {
  'memory.consolidated': payload<{ agentId: string; status: string; result: unknown }>(),
});
