/**
 * A fake Bot Framework for Teams bots on 127.0.0.1, with its own RSA key pair: the OpenID metadata
 * (`/v1/.well-known/openidconfiguration`) naming a JWKS (`/v1/keys`, keys endorsing `msteams`), the client-credentials
 * token endpoint (`/botframework.com/oauth2/v2.0/token`, form body, `invalid_client` for wrong credentials), a
 * connector under the serviceUrl `<origin>/teams/` (`POST v3/conversations/{id}/activities[/{replyToId}]`, bearer
 * token checked, activities recorded, 201 `{id}`, 429 + Retry-After on demand), and a sender that POSTs activities
 * into the bot's messaging endpoint with an `Authorization: Bearer` JWT signed the way the Bot Framework signs them
 * (RS256, kid, issuer https://api.botframework.com, audience the app id, `serviceurl` claim). The JWTs are made with
 * node:crypto, not the adapter's jose, so the two are checked against each other. See test/fakes/README.md.
 */
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { listen, readParams, sendJson, nowSeconds, type RecordedCall } from '../http.ts';

export interface TeamsFakeOptions {
  appId?: string;
  appPassword?: string;
}

/** An activity the bot sent to the connector. */
export interface TeamsSentActivity {
  id: string;
  conversationId: string;
  replyToId?: string;
  activity: { type?: string; text?: string; [key: string]: unknown };
}

/** A user's message as the fake delivers it. */
export interface TeamsInbound {
  /** `a:...` for personal chats, `19:...@thread.v2` for group chats, `19:...@thread.skype;messageid=<root>` in channels. */
  conversationId: string;
  conversationType: 'personal' | 'groupChat' | 'channel';
  text: string;
  /** The bot is @mentioned (an entity of type mention with the bot's id, and `<at>name</at>` in the text). */
  mentionBot?: boolean;
  id?: string;
  fromId?: string;
  fromName?: string;
  type?: string;
}

/** How the sender signs (defaults: as the Bot Framework does, for this bot, valid for an hour). */
export interface TeamsSignOptions {
  audience?: string;
  issuer?: string;
  /** Seconds from now to `exp` (negative: expired). */
  expiresIn?: number;
  /** Signs with a private key whose public half is not the published one, under the published kid. */
  forge?: boolean;
  /** The `serviceurl` claim (default: the activity's serviceUrl). */
  serviceUrlClaim?: string;
  /** No Authorization header at all. */
  noToken?: boolean;
}

export interface TeamsFake {
  origin: string;
  openidUrl: string;
  tokenUrl: string;
  /** The connector's root, as activities carry it. */
  serviceUrl: string;
  appId: string;
  appPassword: string;
  /** The bot's id in conversations (`28:<app id>`). */
  botId: string;
  /** Token requests, JWKS reads and connector calls, in order. */
  calls: RecordedCall[];
  /** Activities the bot sent, in order. */
  sent: TeamsSentActivity[];
  /** Where `send` POSTs (the bot's messaging endpoint). */
  deliverTo(url: string): void;
  /** The activity the Bot Framework would POST for `message`. */
  activity(message: TeamsInbound): Record<string, unknown>;
  /** A JWT over `claims` signed with the current key (or a forged one). */
  token(claims: Record<string, unknown>, options?: { forge?: boolean }): string;
  /** POSTs the activity signed as told; resolves with the bot's answer. */
  send(message: TeamsInbound, options?: TeamsSignOptions): Promise<{ status: number; body: string }>;
  /** POSTs any body with any headers to the messaging endpoint. */
  post(body: unknown, headers: Record<string, string>): Promise<{ status: number; body: string }>;
  /** A new signing key with a new kid, published alongside the old ones; returns the kid. */
  rotateKey(): string;
  /** The connector answers the next activity POST with this status (429 carries Retry-After: `retryAfter`). */
  failNext(status: number, retryAfter?: number): void;
  stop(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

const ISSUER = 'https://api.botframework.com';
const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

function newKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  const kid = createHash('sha256').update(String(jwk.n)).digest('base64url').slice(0, 27);
  return { kid, privateKey, jwk: { ...jwk, kid, use: 'sig', x5t: kid, endorsements: ['msteams'] } };
}

export async function startTeamsFake(options: TeamsFakeOptions = {}): Promise<TeamsFake> {
  const appId = options.appId ?? randomUUID();
  const appPassword = options.appPassword ?? `pw~${randomUUID()}`;
  const keys: SigningKey[] = [newKey()];
  const forged = newKey();
  const issued = new Set<string>();
  const calls: RecordedCall[] = [];
  const sent: TeamsSentActivity[] = [];
  const failures: Array<{ status: number; retryAfter?: number }> = [];
  let target = '';
  let origin = '';

  const server = await listen(async (req, res, url) => {
    const path = url.pathname;
    if (req.method === 'GET' && path === '/v1/.well-known/openidconfiguration') {
      calls.push({ method: 'openid metadata', params: {}, at: Date.now() });
      return sendJson(res, 200, {
        issuer: ISSUER,
        authorization_endpoint: `${origin}/v1/authorize`,
        jwks_uri: `${origin}/v1/keys`,
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['private_key_jwt'],
      });
    }
    if (req.method === 'GET' && path === '/v1/keys') {
      calls.push({ method: 'jwks', params: {}, at: Date.now() });
      return sendJson(res, 200, { keys: keys.map((k) => k.jwk) });
    }
    if (req.method === 'POST' && path === '/botframework.com/oauth2/v2.0/token') {
      const params = await readParams(req, url);
      calls.push({ method: 'token', params: { grant_type: params.grant_type, client_id: params.client_id, scope: params.scope }, at: Date.now() });
      if (params.grant_type !== 'client_credentials') return sendJson(res, 400, { error: 'unsupported_grant_type' });
      if (params.client_id !== appId || params.client_secret !== appPassword)
        return sendJson(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
      if (params.scope !== 'https://api.botframework.com/.default') return sendJson(res, 400, { error: 'invalid_scope' });
      const token = `bf-${randomUUID()}`;
      issued.add(token);
      return sendJson(res, 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token });
    }
    const m = /^\/teams\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
    if (req.method === 'POST' && m) {
      const auth = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''));
      const activity = (await readParams(req, url)) as TeamsSentActivity['activity'];
      const conversationId = decodeURIComponent(m[1]!);
      const replyToId = m[2] ? decodeURIComponent(m[2]) : undefined;
      calls.push({ method: 'connector', params: { conversationId, replyToId, type: activity.type }, at: Date.now() });
      if (!auth || !issued.has(auth[1]!)) return sendJson(res, 401, { message: 'Authorization has been denied for this request.' });
      const failure = failures.shift();
      if (failure)
        return sendJson(
          res,
          failure.status,
          { error: { code: 'Throttled', message: 'throttled' } },
          failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {},
        );
      const id = String(Date.now() * 1000 + sent.length);
      sent.push({ id, conversationId, ...(replyToId ? { replyToId } : {}), activity });
      return sendJson(res, 201, { id });
    }
    sendJson(res, 404, { error: { code: 'NotFound', message: path } });
  });
  origin = `http://127.0.0.1:${server.port}`;
  const serviceUrl = `${origin}/teams/`;
  const botId = `28:${appId}`;

  const token: TeamsFake['token'] = (claims, opts = {}) => {
    const key = keys.at(-1)!;
    const header = { alg: 'RS256', kid: key.kid, x5t: key.kid, typ: 'JWT' };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    return `${input}.${b64url(sign('sha256', Buffer.from(input), opts.forge ? forged.privateKey : key.privateKey))}`;
  };

  const activity: TeamsFake['activity'] = (message) => {
    const mention = message.mentionBot ? '<at>Talon</at>' : '';
    const conversation = {
      id: message.conversationId,
      conversationType: message.conversationType,
      tenantId: 'tenant-1',
      ...(message.conversationType === 'personal' ? {} : { isGroup: true }),
    };
    return {
      type: message.type ?? 'message',
      id: message.id ?? String(Date.now() * 1000 + Math.floor(Math.random() * 1000)),
      timestamp: new Date().toISOString(),
      localTimestamp: new Date().toISOString(),
      serviceUrl,
      channelId: 'msteams',
      from: { id: message.fromId ?? '29:user-1', name: message.fromName ?? 'Ann', aadObjectId: randomUUID() },
      conversation,
      recipient: { id: botId, name: 'Talon' },
      textFormat: 'plain',
      text: mention ? `${mention} ${message.text}` : message.text,
      locale: 'en-US',
      entities: [
        ...(mention ? [{ type: 'mention', mentioned: { id: botId, name: 'Talon' }, text: mention }] : []),
        { type: 'clientInfo', locale: 'en-US', country: 'US', platform: 'Web' },
      ],
      channelData: { tenant: { id: 'tenant-1' } },
    };
  };

  const post: TeamsFake['post'] = async (body, headers) => {
    if (!target) throw new Error('teams fake: deliverTo(url) first');
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.text() };
  };

  return {
    origin,
    openidUrl: `${origin}/v1/.well-known/openidconfiguration`,
    tokenUrl: `${origin}/botframework.com/oauth2/v2.0/token`,
    serviceUrl,
    appId,
    appPassword,
    botId,
    calls,
    sent,
    deliverTo: (url) => void (target = url),
    activity,
    token,
    async send(message, opts = {}) {
      const body = activity(message);
      const now = nowSeconds();
      const claims = {
        serviceurl: opts.serviceUrlClaim ?? serviceUrl,
        nbf: now - 5,
        exp: now + (opts.expiresIn ?? 3600),
        iss: opts.issuer ?? ISSUER,
        aud: opts.audience ?? appId,
      };
      return post(body, opts.noToken ? {} : { authorization: `Bearer ${token(claims, { forge: opts.forge === true })}` });
    },
    post,
    rotateKey() {
      keys.push(newKey());
      return keys.at(-1)!.kid;
    },
    failNext: (status, retryAfter) => void failures.push({ status, ...(retryAfter !== undefined ? { retryAfter } : {}) }),
    stop: () => server.close(),
  };
}
