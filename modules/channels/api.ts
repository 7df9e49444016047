/**
 * Contract of the channels module (`@talon/channels`): the adapter interface every `channel-<name>` module implements
 * and registers through `channelHooks.adapters` (the way an LLM driver taps `llmHooks.drivers`), the service other
 * modules send through, and the events of the channels. Adapters only speak their platform's protocol: access policy,
 * routing, sessions, the inbound and outbound journal, chunk rows and their states belong to the channels module.
 */
import { SyncWaterfallHook, defineEvents, defineHooks, payload, serviceRef } from '@talon/module-sdk';
import type { NetRequest, NetResponse } from '@talon/net';
import type * as Kit from './kit/index.ts';

// ------------------------------------------------------------------ the adapter

/** The JSON Schema of an adapter's own configure fields (an object of scalar or string-array properties). */
export interface ChannelFieldSchema {
  type: 'object';
  properties: Record<string, { type: 'string' | 'integer' | 'number' | 'boolean' | 'array'; description?: string; [key: string]: unknown }>;
  required?: readonly string[];
  additionalProperties?: boolean;
}

/** What the platform and the adapter can do; the channels module switches its features on these. */
export interface ChannelCapabilities {
  /** Replies can go into a thread (Slack threads, Telegram topics, email References). */
  threads: boolean;
  /** Files can be uploaded and received; without it media goes out as links and comes in as a note. */
  media: boolean;
  /** A typing indicator exists (`typing` is called while a turn runs). */
  typing: boolean;
  /** Sent messages can be edited (streamed replies). */
  edits: boolean;
  /** Signing in is done by scanning a QR code (`qr` is set). */
  qr: boolean;
  /**
   * The platform drops a repeated send carrying the same nonce (Discord nonces, Matrix transaction ids): a chunk found
   * `sending` after a crash is sent again with its nonce. Without it such a chunk becomes `unknown` for the operator.
   */
  platformDedup: boolean;
}

/** How the platform counts the length of a message, for the chunker. */
export interface ChannelLimits {
  /** The longest message the platform accepts, in `unit`s (UTF-16 code units, code points or UTF-8 bytes). */
  maxLength: number;
  unit: 'utf16' | 'chars' | 'bytes';
  /** Discord's 17 lines; absent: no line limit. */
  maxLines?: number;
  /** The text format chunks are rendered to. */
  format: 'plain' | 'markdown' | 'telegram_html' | 'slack_mrkdwn';
}

/** A file coming in with a message: fetched by the adapter, or a link the agent may follow. */
export interface InboundMedia {
  mediaType: string;
  name?: string;
  /** Base64 content, when the adapter downloaded it. */
  data?: string;
  url?: string;
}

/** One message from the platform, as the adapter saw it (untrusted content: never executed or rendered raw). */
export interface InboundMessage {
  /** The platform's id of the message: the journal drops a second message with the same id on this channel. */
  platformId: string;
  /** The chat (DM, group, channel, mailbox thread root) the reply goes back to. */
  chatId: string;
  /** A thread inside the chat; its own session and where the reply goes. */
  threadId?: string;
  senderId: string;
  senderName?: string;
  text: string;
  /** A group (several people) rather than a direct message: group_policy applies. */
  isGroup: boolean;
  /** The bot was mentioned, named, or the message replies to one of the bot's: what `group_policy = mention` needs. */
  mentioned?: boolean;
  /** For the bindings router. */
  accountId?: string;
  guildId?: string;
  roles?: string[];
  media?: InboundMedia[];
  /** When the platform says it was sent (ISO). */
  sentAt?: string;
}

/** The outcome of `emit`: resolved only once the message is committed to the journal (or known there already). */
export interface EmitResult {
  /** The platform delivered this id before: nothing new was stored. The adapter acknowledges it all the same. */
  duplicate: boolean;
}

/** A file going out with a chunk. */
export interface OutboundMedia {
  mediaType: string;
  name: string;
  /** Base64 content (an upload), or a URL (a link, where the platform takes no uploads). */
  data?: string;
  url?: string;
}

/** One chunk of a reply: one platform call. */
export interface OutboundChunk {
  chatId: string;
  threadId?: string;
  /** Already chunked to the platform's limit and rendered to its format (ChannelLimits.format). */
  text: string;
  /** The same text without formatting, for a retry when the platform refuses the formatted one (Telegram HTML). */
  plain: string;
  media?: OutboundMedia;
  /** The platform message this answers, when the platform links replies. */
  replyTo?: string;
  /** The journal row's id: stable across re-sends, for platforms that deduplicate (`platformDedup`). */
  nonce: string;
}

/**
 * A failed platform call, thrown by `send`, `typing` or `start`. Errors cross module bundles, so it is told by its
 * name and fields, never with instanceof. `rate_limited` honours `retryAfterMs` and is not counted as a failure;
 * `auth` stops the adapter with `last_error`; `transient` is retried with backoff; `permanent` fails the row.
 */
export interface ChannelError extends Error {
  readonly name: 'ChannelError';
  readonly kind: 'rate_limited' | 'auth' | 'transient' | 'permanent';
  readonly retryAfterMs?: number;
}

/** What a running adapter is given by the channels module. */
export interface AdapterContext {
  /** The channel's name (the adapter's name). */
  channel: string;
  /** The adapter's own fields, validated against its schema (secret fields not included). */
  config: Readonly<Record<string, unknown>>;
  /** The secret fields (`token` and those the adapter lists in `secretFields`), opened from the vault. */
  secrets: Readonly<Record<string, string | undefined>>;
  /**
   * Hands an inbound message to the journal. Resolves once it is committed (or found already there): only then may
   * the adapter acknowledge the platform (move Telegram's offset, ack Slack's envelope, answer the webhook's 2xx).
   * Rejects when the commit failed: do not acknowledge, the platform will deliver it again.
   */
  emit(message: InboundMessage): Promise<EmitResult>;
  /**
   * The connection's state: `connected` on the platform's own ready signal (not on TCP open), `connecting` while
   * reconnecting, `error` with the reason (bad credentials), shown as `last_error`.
   */
  report(state: 'connecting' | 'connected' | 'error', error?: string): void;
  /**
   * Outbound HTTP through the net module's fetch, with the origins of the channel's configured URL fields (`api_url`,
   * `callback_url`) exempted from the private-address rule: a loopback server is reachable only when configured.
   */
  fetch(request: Omit<NetRequest, 'allowHosts' | 'allowCidrs' | 'allowOrigins'>): Promise<NetResponse>;
  /** The origins the `fetch` exempts (for an SDK client given `webFetch`). */
  allowOrigins: readonly string[];
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** Aborts when the adapter is stopped (reconfigure, disable, reload, shutdown): close every socket on it. */
  signal: AbortSignal;
  /**
   * The channel's access policy, for platforms where the bot itself must accept a conversation before any message
   * (Matrix room invites): a DM invite is taken unless `dm` is disabled, a room invite unless `group` is.
   */
  policy?: { dm: 'pairing' | 'allowlist' | 'open' | 'disabled'; group: 'mention' | 'all' | 'disabled'; allowedUsers: readonly string[] };
}

/** A started adapter. */
export interface ChannelConnection {
  /** One platform call for one chunk; resolves with the platform's message id. Throws a ChannelError. */
  send(chunk: OutboundChunk): Promise<{ messageId: string }>;
  /** Shows the typing indicator once (the channels module refreshes it while the turn runs). */
  typing?(target: { chatId: string; threadId?: string }): Promise<void>;
  /** Closes every socket and timer; the signal has aborted already. */
  stop(): Promise<void>;
}

/** A QR sign-in in progress (`capabilities.qr`). */
export interface QrSession {
  /** The QR payload to render as an image, and when it expires (ISO). */
  code: string;
  expiresAt: string;
  /**
   * The sign-in's state. A platform that rotates its code (WhatsApp Web shows a new one every 20-60 s) gives the code
   * shown now and its expiry here; without them the routes answer `code` and `expiresAt`.
   */
  status(): { status: 'pending' | 'scanned' | 'authenticated' | 'expired' | 'failed'; error?: string; code?: string; expiresAt?: string };
  cancel(): void;
}

export interface ChannelAdapter {
  /** The channel's name: lowercase, [a-z][a-z0-9_-]*; the URL segment of /api/channels/{name}. */
  name: string;
  description: string;
  /** The adapter's own configure fields (not the common ones: agent_name, dm_policy, ...; `token` always exists). */
  fields: ChannelFieldSchema;
  /** Fields of `fields` that are secrets besides `token` (stored in the vault, never echoed). */
  secretFields: readonly string[];
  /** Fields of `fields` holding URLs whose origin the adapter's fetch may reach although private (loopback tests). */
  urlFields: readonly string[];
  /**
   * What the schema cannot say, checked at configure once `fields` took the values (a partial configure gives some):
   * the problem naming the field, answered as a 400 before anything is stored, or undefined.
   */
  fieldsProblem?(values: Readonly<Record<string, unknown>>): string | undefined;
  capabilities: ChannelCapabilities;
  limits: ChannelLimits;
  /** Connects; resolves once the adapter runs (it reconnects on its own, reporting its state). Throws a ChannelError. */
  start(ctx: AdapterContext): Promise<ChannelConnection>;
  /** Begins a QR sign-in (capabilities.qr). */
  qr?(ctx: AdapterContext): Promise<QrSession>;
}

export const channelHooks = defineHooks('channels.hooks', () => ({
  /**
   * Adapter modules register here: (list) => [...list, adapter]. The tap goes with the copy of the module that made
   * it, so an adapter's reload swaps it in one step; an adapter module disabled is a channel no longer listed.
   */
  adapters: new SyncWaterfallHook<[ChannelAdapter[]]>(['adapters']),
}));

// ------------------------------------------------------------------ the service

export interface ChannelSend {
  channel: string;
  /** The platform's chat id; absent: the channel's default_conversation. */
  chatId?: string;
  threadId?: string;
  text: string;
  media?: OutboundMedia[];
}

export interface Channels {
  /** Names of the loaded adapters. */
  names(): string[];
  /**
   * Sends through the outbound journal (chunked, one row per chunk) and resolves with the platform ids once sent.
   * Rejects with HttpError 404 (unknown channel), 409 (not configured or not running), 400 (no chat and no
   * default_conversation), or the send's failure (the rows stay `failed` with their payload).
   */
  send(message: ChannelSend): Promise<{ messageIds: string[] }>;
  /** Sends the text to the configured owners of every running channel that has some; resolves with how many got it. */
  notifyOwners(text: string): Promise<number>;
}

export const channelService = serviceRef<Channels>('channels.service');

/**
 * The adapters' shared kit (modules/channels/kit: reconnect loop, send limiter, retry_after reading, chunker,
 * formatter, typing): adapter modules take it with `ctx.use(channelKit)`, since a module may not import another
 * module's files. The type only is imported here; the values come from the running channels module.
 */
export type ChannelKit = typeof Kit;
export const channelKit = serviceRef<ChannelKit>('channels.kit');

// ------------------------------------------------------------------ events

export const channelEvents = defineEvents('channels', {
  /** Committed to the journal (a duplicate delivery publishes nothing). */
  'channel.message_received': payload<{ channel: string; chatId: string; senderId: string; platformId: string }>(),
  /** The policy refused it (`reason`: dm_disabled, not_allowed, pairing, not_mentioned, rate_limited). */
  'channel.message_refused': payload<{ channel: string; chatId: string; senderId: string; reason: string }>(),
  'channel.message_sent': payload<{ channel: string; chatId: string; messageId: string }>(),
  /** A chunk failed for good (its row keeps the payload) or was found unsent after a crash (`unknown`). */
  'channel.send_failed': payload<{ channel: string; chatId: string; state: 'failed' | 'unknown'; error: string }>(),
  'channel.connected': payload<{ channel: string }>(),
  'channel.disconnected': payload<{ channel: string; error?: string }>(),
  'channel.configured': payload<{ channel: string; removed: boolean }>(),
  'channel.pairing_requested': payload<{ channel: string; senderId: string; senderName?: string }>(),
  /** The operator's acts below are events so that the audit trail (all_events) records each one. */
  'channel.enabled': payload<{ channel: string; enabled: boolean }>(),
  'channel.pairing_approved': payload<{ channel: string; senderId: string }>(),
  /** A failed, unknown or expired chunk sent again by the operator, and the state it ended in. */
  'channel.journal_replayed': payload<{ channel: string; id: string; state: string }>(),
  /** Failed, unknown or expired chunks deleted by the operator (`channel` absent: of every channel; `id`: one chunk). */
  'channel.journal_pruned': payload<{ channel?: string; id?: string; deleted: number }>(),
});
