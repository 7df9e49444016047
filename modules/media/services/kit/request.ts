/**
 * Calls to a provider's own API (its configured or catalogue base URL) with a plain fetch: a time bound, the caller's
 * abort, a size cap on the answer, and the contract's mapping of the provider's status to a MediaError kind.
 */
import type { CatalogService } from '@talon/catalog';
import type { ProviderAccess, ProviderRequest, ProviderResponse } from '@talon/media';
import { mediaError, providerMessage, retryAfterMs } from './errors.ts';
import { originOf } from './origin.ts';

export function providerAccess(catalog: CatalogService, name: string): ProviderAccess {
  return { apiKey: catalog.apiKey(name), baseUrl: catalog.baseUrl(name), envVar: catalog.provider(name)?.env_var };
}

export async function providerRequest(access: ProviderAccess, request: ProviderRequest): Promise<ProviderResponse> {
  const { provider } = request;
  // Keys go only to the provider's own API: a URL elsewhere (a returned file) is the kit's download, never this.
  const base = originOf(access.baseUrl);
  if (!base || originOf(request.url) !== base)
    throw mediaError('outage', `refused to call '${request.url}': not the API of provider '${provider}' (${access.baseUrl ?? 'no base URL'})`, { provider });
  const timeout = AbortSignal.timeout(request.timeoutMs);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
      headers: request.headers,
      // A copy types the bytes as the ArrayBuffer-backed view fetch's typings accept.
      body: request.body instanceof Uint8Array ? new Uint8Array(request.body) : request.body,
      signal: AbortSignal.any([request.signal, timeout]),
      // Never followed: fetch would carry the key headers (x-goog-api-key, xi-api-key) to another host, or to a
      // private address. The provider's API does not redirect its calls; one that does is treated as down.
      redirect: 'manual',
    });
  } catch (err) {
    throw failure(err, provider, request, timeout);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw redirected(provider, request.url, response);
  }
  let body: Buffer;
  try {
    body = await readCapped(response, request.maxBytes, provider);
  } catch (err) {
    throw failure(err, provider, request, timeout);
  }
  if (response.status < 200 || response.status >= 300) throw statusError(provider, response, body);
  return {
    status: response.status,
    headers: response.headers,
    body,
    json<T>() {
      try {
        return JSON.parse(body.toString('utf8')) as T;
      } catch {
        throw mediaError('outage', `provider '${provider}' answered with invalid JSON`, { provider, status: response.status });
      }
    },
  };
}

/** A 3xx from the provider's API: an outage naming where it pointed (the Location's origin, never its path or query). */
function redirected(provider: string, requestUrl: string, response: Response): Error {
  const location = response.headers.get('location');
  let target = 'nowhere (no Location)';
  if (location) target = originOf(URL.canParse(location, requestUrl) ? new URL(location, requestUrl).href : undefined) ?? 'an invalid URL';
  return mediaError('outage', `provider '${provider}' answered with a redirect (${response.status}) to ${target}, which is not followed`, {
    provider,
    status: response.status,
  });
}

/** A failure before or while reading the answer: the caller's abort passes through; our timeout and the network are an outage. */
function failure(err: unknown, provider: string, request: ProviderRequest, timeout: AbortSignal): Error {
  // The caller's signal ended it (its stop, or its own time bound): the caller knows why.
  if (request.signal.aborted) return err instanceof Error ? err : new Error(String(err));
  if (err instanceof Error && err.name === 'MediaError') return err;
  if (timeout.aborted) return mediaError('outage', `provider '${provider}' did not answer within ${Math.round(request.timeoutMs / 1000)} s`, { provider });
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return mediaError('outage', `provider '${provider}' could not be reached: ${(err as Error).message}${cause}`, { provider });
}

async function readCapped(response: Response, maxBytes: number, provider: string): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw mediaError('outage', `provider '${provider}' answered with more than ${maxBytes} bytes`, { provider });
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw mediaError('outage', `provider '${provider}' answered with more than ${maxBytes} bytes`, { provider });
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The contract's table: 429 rate_limited, 5xx outage, 401/403 not_configured, other 4xx refused with the reason. */
function statusError(provider: string, response: Response, body: Buffer): Error {
  const status = response.status;
  const init = { provider, status };
  if (status === 429)
    return mediaError('rate_limited', `provider '${provider}' is rate limiting: ${providerMessage(body) ?? 'too many requests'}`, {
      ...init,
      retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
    });
  if (status >= 500) return mediaError('outage', `provider '${provider}' failed (${status}): ${providerMessage(body) ?? response.statusText}`, init);
  // A refused key's message may quote part of the key: it is not repeated.
  if (status === 401 || status === 403) return mediaError('not_configured', `provider '${provider}' refused the key (${status})`, init);
  return mediaError('refused', `provider '${provider}' refused the request (${status}): ${providerMessage(body) ?? response.statusText}`, init);
}
