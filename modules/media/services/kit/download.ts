/**
 * A URL a provider returned (a result file), fetched through the net module's SSRF rules. https only, except an
 * origin the operator configured as the provider's base URL (tests, self-hosted servers), which is also the only
 * loopback or private origin allowed. Redirects are followed here, one hop at a time, so that each hop is checked
 * again and the credentials go only to a hop on the provider's API origin, never to a redirect target elsewhere.
 */
import type { NetFetch } from '@talon/net';
import type { MediaError } from '@talon/media';
import { mediaError } from './errors.ts';
import { originOf } from './origin.ts';

const MAX_HOPS = 3;

export interface DownloadTarget {
  provider: string;
  url: string;
  /** The provider's API base URL (configured or the catalogue's): credentials go only to its origin. */
  apiBase?: string;
  /** The base URL the operator configured ([provider_urls] or PUT .../url): its origin may be http or loopback. */
  configuredBase?: string;
  maxBytes: number;
  timeoutMs: number;
  credentials?: Record<string, string>;
  signal: AbortSignal;
}

export async function download(net: NetFetch, target: DownloadTarget): Promise<Buffer> {
  const { provider } = target;
  const deadline = AbortSignal.timeout(target.timeoutMs);
  const signal = AbortSignal.any([target.signal, deadline]);
  let url = parse(target.url, provider);
  try {
    for (let hop = 0; hop <= MAX_HOPS; hop++) {
      const exempt = originOf(target.configuredBase) === url.origin;
      if (url.protocol !== 'https:' && !exempt) throw refused(provider, `only https URLs are downloaded, not '${url.protocol}//${url.host}'`);
      const headers = originOf(target.apiBase) === url.origin ? target.credentials : undefined;
      const response = await net.webFetch(
        url,
        { method: 'GET', headers, signal, redirect: 'manual' },
        {
          timeoutMs: target.timeoutMs,
          maxBytes: target.maxBytes,
          maxRedirects: 0,
          allowOrigins: exempt ? [url.host] : [],
        },
      );
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        url = parse(new URL(location, url).toString(), provider);
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw mediaError('outage', `the result file of provider '${provider}' answered ${response.status}`, { provider, status: response.status });
      }
      return Buffer.from(await response.arrayBuffer());
    }
    throw refused(provider, `more than ${MAX_HOPS} redirects`);
  } catch (err) {
    throw failure(err, provider, target, deadline);
  }
}

function parse(url: string, provider: string): URL {
  try {
    return new URL(url);
  } catch {
    throw mediaError('outage', `provider '${provider}' returned an invalid URL`, { provider });
  }
}

const refused = (provider: string, why: string): MediaError =>
  mediaError('outage', `the result file of provider '${provider}' was not downloaded: ${why}`, { provider });

function failure(err: unknown, provider: string, target: DownloadTarget, deadline: AbortSignal): Error {
  if (target.signal.aborted) return err instanceof Error ? err : new Error(String(err));
  if (err instanceof Error && err.name === 'MediaError') return err;
  if (deadline.aborted) return refused(provider, `no answer within ${Math.round(target.timeoutMs / 1000)} s`);
  // FetchRefused (SSRF, size): its message says why, for a person.
  return refused(provider, (err as Error).message);
}
