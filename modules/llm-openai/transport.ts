/**
 * The chat-completions wire format over node:http(s) with a keep-alive agent per endpoint, and Server-Sent Events
 * read by eventsource-parser. Every turn makes at least one such call, and the OpenAI SDK on top of fetch cost about
 * a millisecond of CPU per call more (header objects, web streams, abort plumbing): the driver speaks the format
 * itself and keeps the SDK's types (decisions-llm.md). A non-2xx answer becomes the error the driver kit maps
 * (status, Retry-After, the provider's message).
 */
import http from 'node:http';
import https from 'node:https';
import type * as EventSourceParser from 'eventsource-parser';
import { lazyRequire } from '@talon/module-sdk';
import type { DriverKit, ProviderTarget } from '@talon/llm';

/** Loaded with the first streamed answer, not at start-up. */
const sse = lazyRequire<typeof EventSourceParser>(import.meta.url, 'eventsource-parser');

/** The failure of a non-2xx answer, shaped like an SDK's HTTP error so the kit reads status and Retry-After. */
class HttpStatusError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly headers: Headers,
  ) {
    super(message);
  }
}

export interface OpenaiTransport {
  /** POST a JSON body; the JSON answer. */
  json<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T>;
  /** POST a JSON body; the parsed `data:` of each event of the streamed answer, up to `[DONE]`. */
  events<T>(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<T>;
}

export function openaiTransport(target: ProviderTarget, kit: DriverKit): OpenaiTransport {
  const base = target.baseUrl.replace(/\/+$/, '');
  const secure = base.startsWith('https:');
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  // Keyless local servers get no Authorization header at all.
  const auth = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : undefined;

  /** Resolves with a 2xx answer (its body unread); any other status rejects with the provider's message. */
  function post(path: string, body: unknown, accept: string, signal?: AbortSignal): Promise<http.IncomingMessage> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': payload.length, accept, ...auth };
      const req = (secure ? https : http).request(`${base}${path}`, { method: 'POST', agent, headers, signal }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve(res);
        readText(res).then((text) => reject(statusError(status, res.headers, text)), reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  return {
    async json<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
      const res = await post(path, body, 'application/json', signal);
      const text = await readText(res);
      try {
        return JSON.parse(text) as T;
      } catch {
        throw kit.error(`provider '${target.provider}' answered with a body that is not JSON: ${text.slice(0, 200)}`, { provider: target.provider });
      }
    },

    async *events<T>(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<T> {
      const res = await post(path, body, 'text/event-stream', signal);
      const ready: T[] = [];
      let done = false;
      let failure: string | undefined;
      const parser = sse().createParser({
        onEvent(event) {
          if (done || failure !== undefined) return;
          if (event.data === '[DONE]') return void (done = true);
          const data = parseData(event.data);
          // Providers report a failure inside a started stream as an error event or an {error} object.
          if (event.event === 'error' || (data && typeof data === 'object' && 'error' in data))
            failure = providerMessage(event.data) ?? event.data.slice(0, 300);
          else ready.push(data as T);
        },
      });
      res.setEncoding('utf8');
      try {
        // Read to the end, also after [DONE] (later events are ignored): a response read to its end gives its socket
        // back to the pool; one left unread would be destroyed below and the next call would connect again.
        for await (const chunk of res) {
          parser.feed(chunk as string);
          while (ready.length) yield ready.shift()!;
          if (failure !== undefined)
            throw kit.error(`provider '${target.provider}' reported an error in the stream: ${failure}`, { provider: target.provider });
        }
      } finally {
        // A consumer that stops early must not leave the answer streaming into a kept-alive socket.
        if (!res.complete) res.destroy();
      }
    },
  };
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

function readText(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

function statusError(status: number, raw: http.IncomingHttpHeaders, text: string): HttpStatusError {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) if (typeof value === 'string') headers.set(name, value);
  return new HttpStatusError(providerMessage(text) ?? (text.slice(0, 300) || http.STATUS_CODES[status] || 'error'), status, headers);
}

/** The message of an OpenAI-style error body ({error: {message}} or {error: "..."}), if the body is one. */
function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return undefined;
}
