/**
 * The Web API side: WebClients whose every HTTP call goes through the channel context's fetch (the net module's SSRF
 * policy; only the configured api_url's origin may be private), with retries left to the channels module's journal
 * (a 429 is thrown at once with its Retry-After, never slept on inside the client).
 */
import { LogLevel, type FetchFunction, type Logger as SlackLogger, type WebClientOptions } from '@slack/web-api';

type FetchRequestInit = NonNullable<Parameters<FetchFunction>[1]>;
import type { AdapterContext } from '@talon/channels';

export const SLACK_API_URL = 'https://slack.com/api/';
const TIMEOUT_MS = 30_000;
/** Web API answers (an upload's answer included) are far smaller; downloads have their own cap (files.ts). */
const MAX_BYTES = 4 * 1024 * 1024;

/** The configured API root with the trailing slash WebClient joins method names to. */
export function apiUrlOf(ctx: AdapterContext): string {
  const configured = typeof ctx.config.api_url === 'string' && ctx.config.api_url ? ctx.config.api_url : SLACK_API_URL;
  return configured.endsWith('/') ? configured : `${configured}/`;
}

/**
 * Whether an absolute URL Slack handed out (a file upload URL, a file's url_private) may be called with the bot token:
 * only Slack's own hosts over https, or the origin of a configured api_url (a loopback fake in tests). The WebClient
 * sends its Authorization header on every request, so a forged or tampered URL must not take the token elsewhere.
 */
export function fileUrlAllowed(url: string, apiUrl: string): boolean {
  if (!URL.canParse(url)) return false;
  const target = new URL(url);
  if (target.protocol === 'https:' && (target.hostname === 'slack.com' || target.hostname.endsWith('.slack.com'))) return true;
  return apiUrl !== SLACK_API_URL && target.origin === new URL(apiUrl).origin;
}

/**
 * The Socket Mode URL apps.connections.open hands out is opened by the library's own WebSocket (undici), outside the
 * net module: it is let through only to Slack's own hosts over wss, or to the host of the configured api_url (a
 * loopback fake in tests), so a forged or tampered answer cannot point the socket anywhere else.
 */
export function socketUrlAllowed(url: string, apiUrl: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.protocol === 'wss:' && (target.hostname === 'slack.com' || target.hostname.endsWith('.slack.com'))) return true;
  const api = new URL(apiUrl);
  return (target.protocol === 'wss:' || target.protocol === 'ws:') && target.host === api.host && apiUrl !== SLACK_API_URL;
}

type ContextFetch = AdapterContext['fetch'];

/**
 * WebClient's fetch over the context's: the response is built from what net read (bounded, redirects checked). Method
 * calls go under the api_url; the one absolute URL the client posts to is a file's upload_url (filesUploadV2), held
 * to fileUrlAllowed since the client's headers carry the bot token.
 */
export function bridgeFetch(fetch: ContextFetch, apiUrl: string): FetchFunction {
  return async (url: string | URL, init?: FetchRequestInit) => {
    const target = String(url);
    if (!target.startsWith(apiUrl) && !fileUrlAllowed(target, apiUrl)) throw new Error('slack: a URL outside Slack and the configured api_url');
    const body = await encodeBody(init?.body);
    const answer = await fetch({
      url: target,
      method: init?.method ?? 'GET',
      headers: { ...init?.headers, ...body.headers },
      ...(body.bytes !== undefined ? { body: body.bytes } : {}),
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      maxRedirects: 0,
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    if (String(url).endsWith('/apps.connections.open')) checkSocketUrl(answer.body, apiUrl);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    return new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), {
      status: answer.status,
      statusText: answer.statusText,
      headers,
    });
  };
}

/**
 * A request body as net sends it: a string (a method call's form or JSON), or the multipart form the client builds
 * for a file upload (FormData), encoded by undici's Request with its boundary in the content type.
 */
async function encodeBody(body: FetchRequestInit['body']): Promise<{ bytes?: string | Uint8Array; headers?: Record<string, string> }> {
  if (body === undefined) return {};
  if (typeof body === 'string') return { bytes: body };
  const encoded = new Request('http://form.invalid/', { method: 'POST', body });
  return { bytes: new Uint8Array(await encoded.arrayBuffer()), headers: { 'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data' } };
}

function checkSocketUrl(body: Buffer, apiUrl: string): void {
  let parsed: { ok?: unknown; url?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    return; // not JSON: WebClient reports it
  }
  if (parsed.ok === true && typeof parsed.url === 'string' && !socketUrlAllowed(parsed.url, apiUrl)) {
    throw new Error(`slack: apps.connections.open named a socket host outside Slack and the configured api_url`);
  }
}

/**
 * @slack/logger over the channel's log. Debug output is dropped: the libraries log whole frames there (message text,
 * the socket URL with its one-use ticket).
 */
export function slackLogger(log: AdapterContext['log']): SlackLogger {
  const line = (msg: unknown[]) => msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
  return {
    debug: () => undefined,
    info: (...msg: unknown[]) => log.info({}, line(msg)),
    warn: (...msg: unknown[]) => log.warn({}, line(msg)),
    error: (...msg: unknown[]) => log.error({}, line(msg)),
    setLevel: () => undefined,
    getLevel: () => LogLevel.INFO,
    setName: () => undefined,
  };
}

/** Options shared by the bot's WebClient and the Socket Mode client's. */
export function clientOptions(ctx: AdapterContext): Omit<WebClientOptions, 'logger' | 'logLevel'> {
  const apiUrl = apiUrlOf(ctx);
  return {
    slackApiUrl: apiUrl,
    fetch: bridgeFetch(ctx.fetch, apiUrl),
    // The journal retries a chunk (a 429 after its Retry-After, not counted as a failure); the reconnect loop retries
    // connecting. Retrying inside the client as well would multiply both.
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    // A method name never overrides the configured root.
    allowAbsoluteUrls: false,
  };
}
