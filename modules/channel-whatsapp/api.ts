/**
 * Contract of the WhatsApp channel module (`@talon/channel-whatsapp`): the seam of its WhatsApp Web mode. The adapter
 * speaks to WhatsApp Web through a socket made by a `WaSocketFactory`: Baileys in production, loaded only once a
 * channel runs in web mode. `whatsappHooks.socketFactory` hands the factory over, so another transport (or the test
 * fake that emits Baileys' socket events) can take its place: `(baileys) => mine`. The shapes below are the part of
 * Baileys' socket the adapter uses, as Baileys 7 emits them; message contents are untrusted and read field by field.
 */
import { SyncWaterfallHook, defineHooks } from '@talon/module-sdk';

/** Baileys' account credentials (AuthenticationCreds): opaque here but for the signed-in account. */
export interface WaCreds {
  /** The signed-in account once paired: `<number>:<device>@s.whatsapp.net`, and its LID. */
  me?: { id: string; lid?: string; name?: string };
  [field: string]: unknown;
}

/** Baileys' SignalKeyStore: keys by type and id (a null value deletes). */
export interface WaKeyStore {
  get(type: string, ids: string[]): Promise<Record<string, unknown>>;
  set(data: Record<string, Record<string, unknown>>): Promise<void>;
}

/** What a socket signs in with; Baileys merges each `creds.update` into `creds` itself. */
export interface WaAuthState {
  creds: WaCreds;
  keys: WaKeyStore;
}

/** The logger Baileys takes (pino's shape). */
export interface WaLogger {
  level: string;
  child(bindings: Record<string, unknown>): WaLogger;
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

/** Baileys' `connection.update`: a QR code to show, a first pairing, the connection opening or closing. */
export interface WaConnectionUpdate {
  connection?: 'open' | 'connecting' | 'close';
  /** The close's cause: a Boom whose `output.statusCode` is a DisconnectReason (401, 408, 428, 440, 515, …). */
  lastDisconnect?: { error?: (Error & { output?: { statusCode?: number } }) | undefined; date?: Date };
  qr?: string;
  isNewLogin?: boolean;
}

/** A message key: the chat, whether this account sent it, its id, and in a group its author. */
export interface WaMessageKey {
  remoteJid?: string | null;
  /** The chat's other address (its phone-number jid when remoteJid is a LID, or the reverse). */
  remoteJidAlt?: string | null;
  fromMe?: boolean | null;
  id?: string | null;
  participant?: string | null;
  participantAlt?: string | null;
}

/** One message as Baileys hands it over (WAMessage); `message` is the protobuf content, read defensively. */
export interface WaMessage {
  key: WaMessageKey;
  message?: Record<string, unknown> | null;
  /** Seconds since the epoch: a number, or a protobuf Long. */
  messageTimestamp?: unknown;
  pushName?: string | null;
}

export interface WaMessagesUpsert {
  messages: WaMessage[];
  /** `notify`: new messages; `append`: history and this account's own from other devices. */
  type: 'notify' | 'append';
}

export interface WaEvents {
  'connection.update': WaConnectionUpdate;
  'creds.update': Partial<WaCreds>;
  'messages.upsert': WaMessagesUpsert;
}

/** Content for `sendMessage`, in Baileys' AnyMessageContent shapes the adapter sends. */
export type WaContent =
  | { text: string }
  | { image: Buffer; caption?: string; mimetype?: string }
  | { video: Buffer; caption?: string; mimetype?: string }
  | { audio: Buffer; mimetype: string; ptt?: boolean }
  | { document: Buffer; mimetype: string; fileName: string; caption?: string };

/** The socket of one connection; it reconnects never on its own (the adapter does). */
export interface WaSocket {
  ev: {
    on<E extends keyof WaEvents>(event: E, listener: (arg: WaEvents[E]) => void): void;
    off<E extends keyof WaEvents>(event: E, listener: (arg: WaEvents[E]) => void): void;
  };
  /** The signed-in account once the connection is open. */
  readonly user: { id: string; lid?: string; name?: string } | undefined;
  sendMessage(jid: string, content: WaContent): Promise<{ key: WaMessageKey } | undefined>;
  sendPresenceUpdate(type: 'composing' | 'paused' | 'available' | 'unavailable', jid?: string): Promise<void>;
  /** A media message's file, decrypted (from WhatsApp's media host only). */
  downloadMedia(message: WaMessage): Promise<Buffer>;
  /** Closes the connection; a `connection.update` close follows with `error` as its cause. */
  end(error?: Error): Promise<void> | void;
  /** Unlinks this device from the account, then closes (401). */
  logout(): Promise<void>;
}

export interface WaSocketFactory {
  /** How long a QR code lives before the socket shows the next one (ms). */
  qrTtlMs: number;
  create(auth: WaAuthState, logger: WaLogger): Promise<WaSocket>;
}

export const whatsappHooks = defineHooks('channel-whatsapp.hooks', () => ({
  /** The factory WhatsApp Web sockets are made with; Baileys unless a tap returns another. Read at each socket. */
  socketFactory: new SyncWaterfallHook<[WaSocketFactory]>(['factory']),
}));
