import type { Principal } from '@talon/auth';

type Headers = Record<string, string | string[] | undefined>;

/** Paths a principal of role user (a paired device) may not use: they change or expose the service itself. */
const ADMIN_ONLY = /^\/api\/(config|modules|shutdown|restart|pairing|providers\/[^/]+\/key|backups?|restore|migrate|audit|security|hooks|terminal|init)(\/|$)/;

/**
 * Changes a role user (a paired device) may not make: what code the host runs (MCP servers, plugins, skills, hub installs,
 * extensions, hand installs and their dependencies) and where data leaves it (outbound webhooks). Reading them,
 * and using what an administrator installed (activating a hand, calling an MCP tool), stays open to devices.
 */
const ADMIN_ONLY_CHANGES =
  /^\/api\/(mcp\/(servers|reload)|plugins|skills\/(install|uninstall|create|reload)|hub\/install|extensions|hands\/(install|reload|[^/]+\/install-deps|[^/]+$)|webhooks)(\/|$)/;

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Only a well-formed answer counts: anything else a tap returns admits nobody. */
export function isPrincipal(value: unknown): value is Principal {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return typeof p.subject === 'string' && (p.role === 'admin' || p.role === 'user') && (p.cookie === undefined || typeof p.cookie === 'boolean');
}

/**
 * The principal the `authenticate` taps answer for a request, or undefined. A tap's throw is caught by the kernel
 * (it counts as no answer); this catches what still escapes, and refuses a malformed answer: never fail open.
 */
export function principalOf(ask: () => unknown, log: { error(obj: object, msg: string): void }): Principal | undefined {
  let answer: unknown;
  try {
    answer = ask();
  } catch (err) {
    log.error({ err }, 'authenticate hook failed: the request is not admitted by it');
    return undefined;
  }
  if (answer === undefined || isPrincipal(answer)) return answer;
  log.error({ answer: typeof answer }, 'authenticate hook answered something that is not a principal: the request is not admitted by it');
  return undefined;
}

/**
 * What a principal answered by a sign-in module (the dashboard's session cookie, a paired device's token) may do
 * with this request: 'pass', 'none' when there is no principal, else a 403 refusal — the credential is good but
 * not for this request.
 */
export function otherCredential(
  request: { method: string; url: string; headers: Headers },
  principal: Principal | undefined,
): 'pass' | 'none' | { forbidden: string } {
  if (!principal) return 'none';
  // A cookie rides along with cross-site requests: a state-changing one must come from the service's own page.
  if (principal.cookie && UNSAFE.has(request.method)) {
    const host = request.headers.host;
    const origin = request.headers.origin;
    const sameSite = typeof origin === 'string' && host && (origin === `http://${host}` || origin === `https://${host}`);
    if (!sameSite) return { forbidden: 'a change made with the session cookie must come from this service (Origin header)' };
  }
  if (principal.role === 'admin' || deviceMayUse(request.method, request.url.split('?')[0])) return 'pass';
  return { forbidden: 'a paired device may not use this endpoint (administrators only)' };
}

function deviceMayUse(method: string, path: string): boolean {
  return !ADMIN_ONLY.test(path) && !(UNSAFE.has(method) && ADMIN_ONLY_CHANGES.test(path));
}
