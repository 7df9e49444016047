/**
 * Why a WhatsApp Web connection closed, from the close's DisconnectReason (Baileys' Boom `output.statusCode`), and what
 * the adapter does about it: 515 (restart required, as WhatsApp asks right after a pairing) is reconnected at once;
 * 408, 428, 500, 503 and any code not known here go through the reconnect loop's backoff; 401 (logged out on the
 * phone) forgets the credentials and stops; 440 (another session took over these credentials), 403 (the account is
 * barred) and 411 (multi-device mismatch) stop with last_error, since reconnecting would only repeat them.
 */
import type { WaConnectionUpdate } from '@talon/channel-whatsapp';

export const LOGGED_OUT = 'logged out: sign in again with the QR code';

export type CloseAction = { kind: 'restart' } | { kind: 'retry'; reason: string } | { kind: 'logged_out' } | { kind: 'stop'; reason: string };

export const statusCodeOf = (update: WaConnectionUpdate): number | undefined => {
  const code = update.lastDisconnect?.error?.output?.statusCode;
  return typeof code === 'number' ? code : undefined;
};

export function closeAction(update: WaConnectionUpdate): CloseAction {
  const code = statusCodeOf(update);
  const message = update.lastDisconnect?.error?.message;
  const what = `${code ?? 'no code'}${message ? `: ${message}` : ''}`;
  switch (code) {
    case 515:
      return { kind: 'restart' };
    case 401:
      return { kind: 'logged_out' };
    case 440:
      return { kind: 'stop', reason: `replaced: another WhatsApp Web session opened with these credentials (440); restart the channel to take it back` };
    case 403:
      return { kind: 'stop', reason: `WhatsApp refused the account (403 forbidden): check the phone, then sign in again with the QR code` };
    case 411:
      return { kind: 'stop', reason: `multi-device mismatch (411): sign in again with the QR code` };
    default:
      return { kind: 'retry', reason: `the WhatsApp Web connection closed (${what})` };
  }
}
