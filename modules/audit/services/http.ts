/**
 * What the http.response hook tells the trail: refused requests (401, 403, 429) and the API calls that
 * change what the service trusts (provider keys, budgets, MCP servers, hands, extensions, plugins, peers...).
 * Acts that modules publish on the bus (spawns, skills, approvals, backups, refused model calls: a 402 is one of
 * those, and a background turn has no response to see) are recorded from there.
 */
import type { HttpResponseEvent } from '@talon/module-sdk';
import type { AuditRecord } from '@talon/audit';

const REFUSED: Record<number, { event_type: string; outcome: string }> = {
  401: { event_type: 'auth_failed', outcome: 'denied' },
  403: { event_type: 'permission_denied', outcome: 'denied' },
  429: { event_type: 'rate_limited', outcome: 'denied' },
};

/** [method, route pattern (Fastify's), event_type] for successful calls. First match wins. */
const RULES: ReadonlyArray<readonly [string, RegExp, string]> = [
  ['POST', /^\/api\/providers\/:[^/]+\/key$/, 'provider_key_set'],
  // Installs and uninstalls are published by the skills module; a skill written from a request is not.
  ['POST', /^\/api\/skills\/create$/, 'skill_installed'],
  ['DELETE', /^\/api\/providers\/:[^/]+\/key$/, 'provider_key_removed'],
  ['*', /^\/api\/budget(\/|$)/, 'budget_changed'],
  ['*', /^\/api\/mcp\/servers(\/|$)/, 'mcp_server_changed'],
  ['POST', /^\/api\/hands\/install$/, 'hand_installed'],
  ['DELETE', /^\/api\/hands\/:[^/]+$/, 'hand_uninstalled'],
  ['*', /^\/api\/hands(\/|$)/, 'hand_changed'],
  ['POST', /^\/api\/extensions\/install$/, 'extension_installed'],
  ['POST', /^\/api\/extensions\/uninstall$/, 'extension_uninstalled'],
  ['*', /^\/api\/extensions(\/|$)/, 'extension_changed'],
  ['POST', /^\/api\/plugins\/install$/, 'plugin_installed'],
  ['POST', /^\/api\/plugins\/uninstall$/, 'plugin_uninstalled'],
  ['*', /^\/api\/plugins(\/|$)/, 'plugin_changed'],
  ['*', /^\/api\/(peers|pairing|a2a)(\/|$)/, 'trust_changed'],
  ['*', /^\/api\/(webhooks|hooks)(\/|$)/, 'webhook_changed'],
  ['*', /^\/api\/channels(\/|$)/, 'channel_changed'],
  ['*', /^\/api\/approvals\/totp(\/|$)/, 'totp_changed'],
  ['POST', /^\/api\/shutdown$/, 'shutdown_requested'],
];

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every response passes here: nothing is built for the ones the trail does not record. */
export function fromResponse(e: HttpResponseEvent): AuditRecord | undefined {
  const refused = REFUSED[e.statusCode];
  if (refused) return { ...refused, details: where(e) };
  if (!WRITES.has(e.method) || e.statusCode >= 400 || !e.route) return undefined;
  for (const [method, pattern, event_type] of RULES) {
    if ((method === '*' || method === e.method) && pattern.test(e.route)) return { event_type, details: where(e) };
  }
  return undefined;
}

const where = (e: HttpResponseEvent) => ({
  method: e.method,
  route: e.route ?? null,
  url: e.url.split('?')[0],
  status: e.statusCode,
  ip: e.ip,
  request_id: e.id,
});
