/**
 * The sidecar protocol v1 frames (the reference's docs/architecture/sidecar-protocol.md and its corpus under
 * conformance/sidecar/corpus): one JSON object `{method, params?}` per line. Events come from the program's stdout,
 * commands go to its stdin. An unknown method is tolerated (a newer peer may add frames); a line that is not a JSON
 * object is the program's noise and is skipped. Everything in an event is untrusted and checked field by field.
 */
import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '@talon/channels';

export const PROTOCOL_VERSION = 1;

export type SidecarEvent =
  | { method: 'ready'; capabilities: string[]; accountId?: string; protocolVersion?: number }
  | { method: 'message'; message: InboundMessage }
  | { method: 'typing'; userId: string; isTyping: boolean }
  | { method: 'error'; message: string }
  | { method: 'qr_ready'; code: string; url?: string; expiresAt?: string }
  | { method: 'qr_status'; status: string; message?: string }
  | { method: 'unknown'; name: string };

type Params = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);
const isObject = (value: unknown): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One line of the program's stdout; undefined for a line that is no frame. */
export function parseEvent(line: string): SidecarEvent | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(frame) || typeof frame.method !== 'string') return undefined;
  // A present-but-null params is the same as none (the spec's envelope rule).
  const p: Params = isObject(frame.params) ? frame.params : {};
  switch (frame.method) {
    case 'ready':
      return {
        method: 'ready',
        capabilities: Array.isArray(p.capabilities) ? p.capabilities.filter((c): c is string => typeof c === 'string') : [],
        ...(str(p.account_id) ? { accountId: str(p.account_id) } : {}),
        ...(typeof p.protocol_version === 'number' ? { protocolVersion: p.protocol_version } : {}),
      };
    case 'message':
      return messageEvent(p);
    case 'typing':
      return { method: 'typing', userId: str(p.user_id) ?? '', isTyping: p.is_typing !== false };
    case 'error':
      return { method: 'error', message: str(p.message) ?? 'the sidecar reported an error' };
    case 'qr_ready':
      if (!str(p.qr_code)) return { method: 'unknown', name: 'qr_ready without qr_code' };
      return {
        method: 'qr_ready',
        code: str(p.qr_code)!,
        ...(str(p.qr_url) ? { url: str(p.qr_url) } : {}),
        ...(str(p.expires_at) ? { expiresAt: str(p.expires_at) } : {}),
      };
    case 'qr_status':
      return { method: 'qr_status', status: str(p.status) ?? 'failed', ...(str(p.message) ? { message: str(p.message) } : {}) };
    default:
      return { method: 'unknown', name: frame.method.slice(0, 64) };
  }
}

/**
 * The message's text: `content` supersedes the `text` mirror. A slash command (`{Command: {name, args}}`) has no
 * mirror and is flattened back to `/name args`; the richer content variants are provisional in v1 and are passed as
 * their `text` mirror, or named when there is none.
 */
function contentText(p: Params): string {
  const content = p.content;
  if (isObject(content)) {
    if (typeof content.Text === 'string') return content.Text;
    if (isObject(content.Command) && typeof content.Command.name === 'string') {
      const args = Array.isArray(content.Command.args) ? content.Command.args.filter((a): a is string => typeof a === 'string') : [];
      return [`/${content.Command.name}`, ...args].join(' ');
    }
    if (typeof p.text === 'string' && p.text) return p.text;
    return `[${Object.keys(content)[0] ?? 'empty'} content the sidecar adapter does not pass on]`;
  }
  return typeof content === 'string' ? content : (str(p.text) ?? '');
}

function messageEvent(p: Params): SidecarEvent {
  const senderId = str(p.user_id);
  if (!senderId) return { method: 'unknown', name: 'message without user_id' };
  const metadata = isObject(p.metadata) ? p.metadata : {};
  const threadId = str(p.thread_id);
  const senderName = str(p.user_name) ?? str(p.username);
  return {
    method: 'message',
    message: {
      // Without message_id the journal cannot tell a re-delivery: the message gets an id of its own.
      platformId: str(p.message_id) ?? `sidecar-${randomUUID()}`,
      // The legacy minimal message has no channel_id: it is a direct chat with its sender.
      chatId: str(p.channel_id) ?? senderId,
      senderId,
      ...(senderName ? { senderName } : {}),
      text: contentText(p),
      isGroup: p.is_group === true,
      ...(threadId ? { threadId } : {}),
      ...(metadata.was_mentioned === true ? { mentioned: true } : {}),
    },
  };
}

/** The commands the supervisor sends (the corpus's shapes: absent optional fields are omitted, not null). */
export type SidecarCommand =
  | { method: 'ready_ack' | 'heartbeat' | 'shutdown' }
  | { method: 'typing'; params: { channel_id: string } }
  | {
      method: 'send';
      params: {
        channel_id: string;
        text: string;
        content: { Text: string };
        thread_id?: string;
        user: { platform_id: string; display_name: string; librefang_user: null };
      };
    };

export function sendCommand(chatId: string, text: string, threadId?: string): SidecarCommand {
  return {
    method: 'send',
    params: {
      channel_id: chatId,
      text,
      content: { Text: text },
      ...(threadId ? { thread_id: threadId } : {}),
      // The reference addresses the reply's recipient by the chat: its platform_id is the channel_id.
      user: { platform_id: chatId, display_name: chatId, librefang_user: null },
    },
  };
}

export const encode = (command: SidecarCommand): string => `${JSON.stringify(command)}\n`;
