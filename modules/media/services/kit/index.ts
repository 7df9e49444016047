/** The driver kit (`media.kit`): what driver modules build on, so each of them maps errors, keys and files alike. */
import type { CatalogService } from '@talon/catalog';
import type { MediaDriverKit } from '@talon/media';
import type { NetFetch } from '@talon/net';
import { convert, probe, runChecked, which, withTempDir } from '../audio/index.ts';
import type { VideoGate } from '../video/gate.ts';
import { download } from './download.ts';
import { isMediaError, mediaError } from './errors.ts';
import { providerAccess, providerRequest } from './request.ts';

export interface KitDeps {
  catalog: CatalogService;
  net: NetFetch;
  /** [media] max_result_bytes: no driver reads more than this into memory, whatever cap it asks for. */
  maxResultBytes: () => number;
  /** Inside a video poll a download waits for this gate: one finished video in memory at a time. */
  videoGate: VideoGate;
}

export function createKit({ catalog, net, maxResultBytes, videoGate }: KitDeps): MediaDriverKit {
  const cap = (asked: number) => Math.min(asked, maxResultBytes());
  return {
    error: mediaError,
    isMediaError,
    provider: (name) => providerAccess(catalog, name),
    request: (request) => providerRequest(providerAccess(catalog, request.provider), { ...request, maxBytes: cap(request.maxBytes) }),
    download: async (provider, url, options) => {
      await videoGate.enter();
      return download(net, {
        provider,
        url,
        apiBase: catalog.baseUrl(provider),
        configuredBase: catalog.configuredUrl(provider),
        ...options,
        maxBytes: cap(options.maxBytes),
      });
    },
    probe,
    convert,
    which,
    run: runChecked,
    withTempDir,
  };
}
