/**
 * Contract of the net module: safe outbound HTTP for every module that reaches another host (web_fetch, webhooks,
 * push, sign-in providers, registries, A2A agents). One SSRF rule: every hop's host is resolved once, every address
 * must be public (global unicast, no cloud metadata address) unless the caller's operator exempted it, and the
 * connection is pinned to the checked address so DNS rebinding cannot move it; redirects are checked again; bodies and
 * time are capped. Refusals reject with an Error whose name is 'FetchRefused' (the message says why, for a person or a
 * model); a contract exports no classes, so callers compare the name.
 */
import { serviceRef } from '@talon/module-sdk';

/** Who may be reached although private or loopback: the caller passes its own operator's setting. */
export interface NetExemptions {
  /**
   * Host globs ("*.corp.example"), literal IPs or CIDRs: a glob exempts a name (all its addresses), an IP or CIDR
   * exempts those addresses whatever name resolves to them. The `allow_hosts` keys of webhooks, pairing, oidc, hub.
   */
  allowHosts?: readonly string[];
  /** Further address ranges (CIDRs or IPs) exempt from the rule ([tools.web] allow_cidrs). */
  allowCidrs?: readonly string[];
  /**
   * 'host' or 'host:port' entries (IPv6 in brackets with a port) compared exactly with the URL's host: only a URL
   * naming that origin is exempt, not another name that resolves to the same address ([a2a] allowed_hosts).
   */
  allowOrigins?: readonly string[];
}

export interface NetRequest extends NetExemptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  /** Request body, sent as given (set content-type in headers); bytes for a binary upload (a multipart file). */
  body?: string | Uint8Array;
  timeoutMs: number;
  /** The body is read up to this many bytes; the rest is dropped and `truncated` set. */
  maxBytes: number;
  /** Redirects followed (each hop checked again); more is a refusal. Default 5. */
  maxRedirects?: number;
  /** A further check per hop (an agent's capabilities): returns the refusal, or undefined to go on. */
  permitHost?: (host: string, port: number) => string | undefined;
  signal?: AbortSignal;
}

export interface NetResponse {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  truncated: boolean;
  finalUrl: string;
}

/** The rules of a WHATWG-style fetch handed to an SDK client (A2A, openid-client). */
export interface NetStreamPolicy extends NetExemptions {
  timeoutMs: number;
  /** The streamed body errors (FetchRefused) once it passes this many bytes. */
  maxBytes: number;
  /** Redirects followed, each checked again; a further redirect is returned to the client unfollowed. Default 0. */
  maxRedirects?: number;
}

export interface NetFetch {
  /** One request, every hop resolved, checked and pinned; the body read into memory up to maxBytes. */
  fetch(request: NetRequest): Promise<NetResponse>;
  /**
   * The same rules behind the signature of the global fetch, the body streamed (server-sent events): for SDK clients
   * that take a fetch function. Call it per request (a closure over the service would outlive a reload of net).
   * Only text request bodies are sent.
   */
  webFetch(input: string | URL | Request, init: RequestInit | undefined, policy: NetStreamPolicy): Promise<Response>;
  /** Resolves the URL's host and applies the same rules without connecting (for clients such as git); rejects like fetch. */
  check(url: string, exemptions?: NetExemptions): Promise<void>;
}

export const netFetch = serviceRef<NetFetch>('net.fetch');
