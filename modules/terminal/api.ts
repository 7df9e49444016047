/** Contract of the terminal module: the events it publishes (the audit trail records them). */
import { defineEvents, payload } from '@talon/module-sdk';

export const terminalEvents = defineEvents('terminal', {
  'terminal.session_started': payload<Record<string, unknown>>(),
  'terminal.session_ended': payload<Record<string, unknown>>(),
});
