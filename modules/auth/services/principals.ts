import type { DashboardSessions } from '@talon/oidc';
import type { PairedDevices } from '@talon/pairing';

type Headers = Record<string, string | string[] | undefined>;

/** Paths a paired device (role user) may not use: they change or expose the service itself. */
const ADMIN_ONLY = /^\/api\/(config|modules|shutdown|restart|pairing|providers\/[^/]+\/key|backups?|restore|migrate|audit|security|hooks|terminal|init)(\/|$)/;

/**
 * Changes a paired device may not make: what code the host runs (MCP servers, plugins, skills, hub installs,
 * extensions, hand installs and their dependencies) and where data leaves it (outbound webhooks). Reading them,
 * and using what an administrator installed (activating a hand, calling an MCP tool), stays open to devices.
 */
const ADMIN_ONLY_CHANGES =
  /^\/api\/(mcp\/(servers|reload)|plugins|skills\/(install|uninstall|create|reload)|hub\/install|extensions|hands\/(install|reload|[^/]+\/install-deps|[^/]+$)|webhooks)(\/|$)/;

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Credentials besides the API key: the dashboard's session cookie (oidc module) and a paired device's token
 * (pairing module). 'pass' when one of them admits the request, 'none' when the request carries neither, else
 * a 403 refusal: the credential is good but not for this request.
 */
export function otherCredential(
  request: { method: string; url: string; headers: Headers },
  peers: { sessions?: DashboardSessions; devices?: PairedDevices },
): 'pass' | 'none' | { forbidden: string } {
  const session = peers.sessions?.authenticate(request.headers);
  if (session) {
    // A cookie rides along with cross-site requests: a state-changing one must come from the service's own page.
    if (!UNSAFE.has(request.method)) return 'pass';
    const host = request.headers.host;
    const origin = request.headers.origin;
    const sameSite = typeof origin === 'string' && host && (origin === `http://${host}` || origin === `https://${host}`);
    return sameSite ? 'pass' : { forbidden: 'a change made with the session cookie must come from this service (Origin header)' };
  }
  const device = peers.devices?.authenticate(request.headers);
  if (device)
    return deviceMayUse(request.method, request.url.split('?')[0]) ? 'pass' : { forbidden: 'a paired device may not use this endpoint (administrators only)' };
  return 'none';
}

function deviceMayUse(method: string, path: string): boolean {
  return !ADMIN_ONLY.test(path) && !(UNSAFE.has(method) && ADMIN_ONLY_CHANGES.test(path));
}
