/**
 * A fake of Google Chat for the channel-google-chat adapter, speaking Google's wire protocols: interaction events
 * POSTed to the app's HTTP endpoint with `Authorization: Bearer <JWT>` signed RS256 by the fake's own key for
 * `chat@system.gserviceaccount.com` (audience: the project number), its keys published as a JWK set the way Google
 * publishes that account's keys; the OAuth 2.0 token endpoint's JWT bearer grant (the service account's assertion
 * checked against the key pair it was issued); and the Chat REST API's `spaces.messages.create`
 * (`POST /v1/{space}/messages` with `requestId` idempotent: the same id answers the message it created,
 * `messageReplyOption` and `thread.name`), with 429 RESOURCE_EXHAUSTED injection. Google Chat documents no redelivery
 * of a failed event, so each event is POSTed once and its status recorded.
 */
import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { listen, readParams, sendJson, type RecordedCall } from '../http.ts';

export const CHAT_ISSUER = 'chat@system.gserviceaccount.com';
export const CHAT_SCOPE = 'https://www.googleapis.com/auth/chat.bot';

export interface GoogleChatMessage {
  name: string;
  space: string;
  text: string;
  thread?: string;
  requestId?: string;
  replyOption?: string;
}

export interface GoogleChatDelivery {
  message: string;
  status: number;
}

export interface ChatEventInput {
  /** The space's name (`spaces/…`); `dm` makes it a direct message space. */
  space: string;
  dm: boolean;
  sender: string;
  text: string;
  /** Mentions the app (a USER_MENTION annotation of the bot user). */
  mentioned?: boolean;
  /** A reply in this thread (`threadReply: true`); absent: a new top-level message. */
  thread?: string;
  attachments?: Array<{ contentName: string; contentType: string }>;
}

export interface GoogleChatFake {
  /** The adapter's config: api_url, token_url, jwks_url, project_number; `serviceAccountKey` is its token. */
  apiRoot: string;
  tokenUrl: string;
  jwksUrl: string;
  projectNumber: string;
  serviceAccountKey: string;
  /** The app's user name, as mentions carry it. */
  botUser: string;
  deliverTo(url: string): void;
  /** A MESSAGE event POSTed to the endpoint; resolves with the answer's status. */
  injectMessage(input: ChatEventInput): Promise<number>;
  /** POSTs a raw event with the given Authorization header (a forged or missing token). */
  postRaw(body: unknown, authorization?: string): Promise<Response>;
  /** A token as Chat signs it, with claims overridden (another audience, an expired one). */
  signEvent(claims?: { aud?: string; iss?: string; expSeconds?: number | null }): Promise<string>;
  messages: GoogleChatMessage[];
  deliveries: GoogleChatDelivery[];
  calls: RecordedCall[];
  /** The next spaces.messages.create answers 429 RESOURCE_EXHAUSTED. */
  rateLimitNext(): void;
  stop(): Promise<void>;
}

const pem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const googleError = (code: number, status: string, message: string) => ({ error: { code, message, status } });

export async function startGoogleChatFake(): Promise<GoogleChatFake> {
  const chatKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const chatKid = randomUUID().replace(/-/g, '');
  const chatJwk: JWK = { ...(await exportJWK(chatKeys.publicKey)), kid: chatKid, alg: 'RS256', use: 'sig' };
  const account = pem();
  const accountKeyId = randomUUID().replace(/-/g, '');
  const accountPublic = createPublicKey(account.publicKey);
  const projectNumber = String(100000000000 + Math.floor(Math.random() * 1e9));
  const botUser = `users/${Math.floor(Math.random() * 1e15)}`;
  const tokens = new Set<string>();
  const messages: GoogleChatMessage[] = [];
  const deliveries: GoogleChatDelivery[] = [];
  const calls: RecordedCall[] = [];
  const byRequestId = new Map<string, GoogleChatMessage>();
  const stopped = new AbortController();
  let limited = false;
  let endpoint: string | undefined;
  let next = 1;
  let root = '';

  const signEvent = (claims: { aud?: string; iss?: string; expSeconds?: number | null } = {}) => {
    const jwt = new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: chatKid, typ: 'JWT' })
      .setIssuer(claims.iss ?? CHAT_ISSUER)
      .setAudience(claims.aud ?? projectNumber)
      .setIssuedAt();
    // expSeconds null: a token with no expiry at all (Chat always sends one).
    if (claims.expSeconds !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + (claims.expSeconds ?? 3600));
    return jwt.sign(chatKeys.privateKey);
  };

  const post = async (body: unknown, authorization?: string) =>
    fetch(endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) },
      body: JSON.stringify(body),
      signal: stopped.signal,
    });

  const server = await listen(async (req, res, url) => {
    const params = await readParams(req, url);
    calls.push({ method: `${req.method} ${url.pathname}`, params, at: Date.now() });
    if (req.method === 'GET' && url.pathname === '/jwks') return sendJson(res, 200, { keys: [chatJwk] });
    if (req.method === 'POST' && url.pathname === '/token') {
      // The JWT bearer grant (RFC 7523) as Google's token endpoint takes it.
      if (params.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' || typeof params.assertion !== 'string')
        return sendJson(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
      try {
        const { payload } = await jwtVerify(params.assertion, accountPublic, { audience: `${root}/token` });
        if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes(CHAT_SCOPE)) throw new Error('scope');
      } catch {
        return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      }
      const token = `ya29.${randomUUID()}`;
      tokens.add(token);
      return sendJson(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
    }
    const create = /^\/v1\/(spaces\/[^/]+)\/messages$/.exec(url.pathname);
    if (req.method === 'POST' && create) {
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      if (!bearer || !tokens.has(bearer)) return sendJson(res, 401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'));
      if (limited) {
        limited = false;
        return sendJson(res, 429, googleError(429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Write requests'"));
      }
      const requestId = url.searchParams.get('requestId') ?? undefined;
      const earlier = requestId ? byRequestId.get(requestId) : undefined;
      if (earlier) return sendJson(res, 200, { name: earlier.name, text: earlier.text, thread: { name: earlier.thread } });
      const text = params.text;
      if (typeof text !== 'string' || !text || text.length > 4096)
        return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', 'Message text is empty or too long'));
      const threadName = (params.thread as { name?: unknown } | undefined)?.name;
      const replyOption = url.searchParams.get('messageReplyOption') ?? undefined;
      if (threadName !== undefined && replyOption === undefined)
        return sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', 'thread.name given without messageReplyOption'));
      const space = create[1]!;
      const m: GoogleChatMessage = {
        name: `${space}/messages/m${next++}`,
        space,
        text,
        thread: typeof threadName === 'string' ? threadName : `${space}/threads/t${next++}`,
        ...(requestId ? { requestId } : {}),
        ...(replyOption ? { replyOption } : {}),
      };
      messages.push(m);
      if (requestId) byRequestId.set(requestId, m);
      return sendJson(res, 200, { name: m.name, text: m.text, thread: { name: m.thread } });
    }
    return sendJson(res, 404, googleError(404, 'NOT_FOUND', 'Requested entity was not found.'));
  });
  root = `http://127.0.0.1:${server.port}`;

  const eventOf = (input: ChatEventInput) => {
    const id = `m${next++}`;
    const mention = `@Talon `;
    const text = input.mentioned ? mention + input.text : input.text;
    const thread = input.thread ?? `${input.space}/threads/t${next++}`;
    return {
      type: 'MESSAGE',
      eventTime: new Date().toISOString(),
      space: { name: input.space, type: input.dm ? 'DM' : 'ROOM', spaceType: input.dm ? 'DIRECT_MESSAGE' : 'SPACE', singleUserBotDm: input.dm },
      user: { name: input.sender, displayName: 'Ann', type: 'HUMAN' },
      message: {
        name: `${input.space}/messages/${id}`,
        sender: { name: input.sender, displayName: 'Ann', type: 'HUMAN' },
        createTime: new Date().toISOString(),
        text,
        argumentText: input.mentioned ? input.text : text,
        thread: { name: thread },
        threadReply: input.thread !== undefined,
        space: { name: input.space },
        ...(input.mentioned
          ? {
              annotations: [
                {
                  type: 'USER_MENTION',
                  startIndex: 0,
                  length: mention.length - 1,
                  userMention: { user: { name: botUser, displayName: 'Talon', type: 'BOT' }, type: 'MENTION' },
                },
              ],
            }
          : {}),
        ...(input.attachments
          ? {
              attachment: input.attachments.map((a, i) => ({
                name: `${input.space}/messages/${id}/attachments/a${i}`,
                contentName: a.contentName,
                contentType: a.contentType,
                source: 'UPLOADED_CONTENT',
                attachmentDataRef: { resourceName: `res-${id}-${i}` },
              })),
            }
          : {}),
      },
    };
  };

  return {
    apiRoot: root,
    tokenUrl: `${root}/token`,
    jwksUrl: `${root}/jwks`,
    projectNumber,
    serviceAccountKey: JSON.stringify({
      type: 'service_account',
      project_id: 'talon-test',
      private_key_id: accountKeyId,
      private_key: account.privateKey,
      client_email: 'talon-bot@talon-test.iam.gserviceaccount.com',
      token_uri: `${root}/token`,
    }),
    botUser,
    deliverTo(u) {
      endpoint = u;
    },
    async injectMessage(input) {
      const event = eventOf(input);
      const status = await post(event, `Bearer ${await signEvent()}`).then(
        async (res) => (await res.arrayBuffer(), res.status),
        () => 0,
      );
      deliveries.push({ message: event.message.name, status });
      return status;
    },
    postRaw: (body, authorization) => post(body, authorization),
    signEvent,
    messages,
    deliveries,
    calls,
    rateLimitNext() {
      limited = true;
    },
    async stop() {
      stopped.abort();
      await server.close();
    },
  };
}
