/**
 * Baileys, the WhatsApp Web library, loaded on first use: only a channel in web mode pays for it (a cloud channel never
 * loads it). It gives the production socket factory and the codec of the auth state (fresh credentials, BufferJSON, the
 * protobuf of app-state keys), which web mode uses whatever factory makes its sockets. Baileys opens its own WebSocket
 * to WhatsApp (web.whatsapp.com) and downloads media from WhatsApp's media host only: that traffic does not go through
 * the net module, like IRC's or XMPP's own sockets. The WhatsApp Web version is the one this Baileys release ships
 * (fetchLatestBaileysVersion would ask the network at every start).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { lazy } from '@talon/module-sdk';
import type { WaAuthState, WaCreds, WaLogger, WaMessage, WaSocket, WaSocketFactory } from '@talon/channel-whatsapp';

type Baileys = typeof import('baileys');

/**
 * The ES module loader's own import(). Module code is bundled to CommonJS with every import() made a require(), and
 * under tsx (npm run dev, the tests) a require() of an ES module package is compiled to CommonJS, which cannot load
 * Baileys' whatsapp-rust-bridge (it exports for `import` only). A Function's import() is left alone by both.
 */
const nativeImport = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;

/** Baileys, resolved from this module's folder (then the service's), loaded once. */
const loadBaileys = lazy(async () => (await nativeImport(pathToFileURL(createRequire(import.meta.url).resolve('baileys')).href)) as Baileys);

/** How long each QR code lives; Baileys shows the next one when it ends, until WhatsApp's refs run out (408). */
const QR_TTL_MS = 30_000;
/** The only host media is downloaded from: a sender's message cannot point the download elsewhere. */
const MEDIA_HOST = 'mmg.whatsapp.net';

/** Serialises the auth state as Baileys' own auth stores do. */
export interface WaCodec {
  freshCreds(): WaCreds;
  stringify(value: unknown): string;
  parse(text: string): unknown;
  /** A key as Baileys reads it back (app-state sync keys are protobuf objects). */
  revive(type: string, value: unknown): unknown;
}

export async function loadCodec(): Promise<WaCodec> {
  const { initAuthCreds, BufferJSON, proto } = await loadBaileys();
  return {
    freshCreds: () => initAuthCreds() as unknown as WaCreds,
    stringify: (value) => JSON.stringify(value, BufferJSON.replacer),
    parse: (text) => JSON.parse(text, BufferJSON.reviver) as unknown,
    revive: (type, value) => (type === 'app-state-sync-key' && value ? proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>) : value),
  };
}

/** The production factory: a Baileys socket per connection. */
export const baileysFactory: WaSocketFactory = baileysFactoryFor();

/** Baileys sockets; `waWebSocketUrl` (WhatsApp's by default) points them elsewhere, for a test on loopback. */
export function baileysFactoryFor(options: { waWebSocketUrl?: string } = {}): WaSocketFactory {
  return {
    qrTtlMs: QR_TTL_MS,
    create: (auth, logger) => createSocket(auth, logger, options.waWebSocketUrl),
  };
}

async function createSocket(auth: WaAuthState, logger: WaLogger, waWebSocketUrl: string | undefined): Promise<WaSocket> {
  const baileys = await loadBaileys();
  type Config = Parameters<typeof baileys.makeWASocket>[0];
  const keys = baileys.makeCacheableSignalKeyStore(auth.keys as unknown as Config['auth']['keys'], logger);
  const sock = baileys.makeWASocket({
    auth: { creds: auth.creds as unknown as Config['auth']['creds'], keys },
    logger,
    qrTimeout: QR_TTL_MS,
    // A bot: no "online" presence that silences the phone's notifications, no history sync, no link previews.
    markOnlineOnConnect: false,
    syncFullHistory: false,
    shouldSyncHistoryMessage: () => false,
    generateHighQualityLinkPreview: false,
    getMessage: async () => undefined,
    ...(waWebSocketUrl ? { waWebSocketUrl } : {}),
  });
  const socket: WaSocket = {
    ev: sock.ev as unknown as WaSocket['ev'],
    get user() {
      return sock.user;
    },
    sendMessage: (jid, content) => sock.sendMessage(jid, content) as Promise<{ key: WaMessage['key'] } | undefined>,
    sendPresenceUpdate: (type, jid) => sock.sendPresenceUpdate(type, jid),
    downloadMedia: (message) =>
      baileys.downloadMediaMessage(message as unknown as Parameters<typeof baileys.downloadMediaMessage>[0], 'buffer', { host: MEDIA_HOST }),
    end: (error) => sock.end(error),
    logout: () => sock.logout(),
  };
  return socket;
}

/**
 * Baileys' logger, onto the channel's: warnings and errors only (its info and debug lines are protocol chatter, some
 * with the account's ids).
 */
export function baileysLogger(log: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }): WaLogger {
  const quiet = () => undefined;
  const asObject = (obj: unknown) => (typeof obj === 'object' && obj !== null ? obj : { detail: obj });
  const logger: WaLogger = {
    level: 'warn',
    child: () => logger,
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: (obj, msg) => log.warn({ baileys: asObject(obj) }, msg ?? 'whatsapp web'),
    error: (obj, msg) => log.error({ baileys: asObject(obj) }, msg ?? 'whatsapp web'),
  };
  return logger;
}
