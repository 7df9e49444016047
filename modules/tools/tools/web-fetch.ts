import type { ToolFactory } from '../services/deps.ts';
import { anyGlob } from '../services/globs.ts';
import { htmlToText } from '../services/html-text.ts';
import type { NetResponse } from '@talon/net';
import { fail, failFrom, ok, optionalString, requiredString } from '../services/result.ts';

/** capabilities.network globs match the host or host:port. */
export function networkRefusal(patterns: readonly string[], host: string, port: number): string | undefined {
  if (!patterns.length) return 'web_fetch is not permitted: the agent manifest grants no network access (capabilities.network is empty)';
  if (anyGlob(patterns, host) || anyGlob(patterns, `${host}:${port}`)) return undefined;
  return `host '${host}' is not permitted by the agent's capabilities.network (${patterns.join(', ')})`;
}

function headerMap(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError("'headers' must be an object of header names to strings");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new TypeError(`header '${k}' must be a string`);
    out[k] = v;
  }
  return out;
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join('')}\n\n... [truncated: ${chars.length} characters in total, showing ${max}]` : text;
}

export const webFetchTool: ToolFactory = (deps) => ({
  name: 'web_fetch',
  description: 'Fetch a URL with SSRF protection. GET of an HTML page returns readable text; other responses return the raw body.',
  aliases: ['WebFetch', 'fetch_url'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'http or https URL' },
      method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'], description: 'default GET' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: 'string' },
    },
    required: ['url'],
  },
  async execute(input, ctx) {
    const web = deps.config().web;
    let result: NetResponse;
    let method: string;
    try {
      const url = requiredString(input, 'url', 'web_fetch');
      method = (optionalString(input, 'method') ?? 'GET').toUpperCase();
      result = await deps.net().fetch({
        url,
        method,
        headers: { 'user-agent': 'Talon-web_fetch/0.1', ...headerMap(input.headers) },
        body: optionalString(input, 'body'),
        timeoutMs: web.timeout_secs * 1000,
        maxBytes: web.max_bytes,
        maxRedirects: web.max_redirects,
        allowHosts: web.allow_hosts,
        allowCidrs: web.allow_cidrs,
        permitHost: (host, port) => networkRefusal(ctx.agent.manifest.capabilities.network ?? [], host, port),
        signal: ctx.signal,
      });
    } catch (err) {
      if ((err as Error).name === 'FetchRefused') return fail(`Blocked: ${(err as Error).message}`);
      if (err instanceof TypeError && /Invalid URL/i.test(err.message)) return fail(`Invalid URL: ${String(input.url)}`);
      if (ctx.signal.aborted) return fail('Fetch aborted: the turn was stopped');
      if ((err as Error).name === 'TimeoutError') return fail(`Fetch timed out after ${web.timeout_secs} seconds`);
      return failFrom(err, 'Fetch failed');
    }
    const type = String(result.headers['content-type'] ?? '');
    const raw = result.body.toString('utf8');
    const text = method === 'GET' && /html/i.test(type) ? htmlToText(raw) : raw;
    const note = result.truncated ? `\n[body cut at ${web.max_bytes} bytes]` : '';
    const content = truncate(text, web.max_chars) + note;
    if (result.status >= 400) return fail(`HTTP ${result.status} ${result.statusText} (${result.finalUrl})\n\n${content}`);
    return ok(content);
  },
});
