/** Contract of the taint module: the events it publishes. */
import { defineEvents, payload } from '@talon/module-sdk';

export const taintEvents = defineEvents('taint', {
  'taint.violation': payload<{ agentId: string; tool: string; sink: string; rules: string[]; action: string; labels: string[] }>(),
});
