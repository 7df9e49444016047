/**
 * Which connectors replies may go to. An activity names its serviceUrl, and a reply is a POST there carrying the
 * bot's token: were any host taken, whoever got an activity signed could send the token (and the service's requests)
 * anywhere. So only https on the Bot Framework's service URL hosts (service_url_hosts, by default the documented ones:
 * config.ts DEFAULT_SERVICE_URL_HOSTS), plus the one origin the operator configured (an emulator, a test connector).
 */
import { DEFAULT_SERVICE_URL_HOSTS } from '../config.ts';

export interface ServiceUrlPolicy {
  /** Host names, or `*.domain` for the names under a domain (not the domain itself). */
  hosts: readonly string[];
  /** `service_url_allow`: one more origin, any scheme. */
  allow?: string;
}

/** The policy of a channel's configuration: service_url_hosts (else the default hosts) and service_url_allow. */
export function serviceUrlPolicy(config: Readonly<Record<string, unknown>>): ServiceUrlPolicy {
  const hosts = Array.isArray(config.service_url_hosts) ? config.service_url_hosts.filter((h): h is string => typeof h === 'string') : [];
  const allow = typeof config.service_url_allow === 'string' ? config.service_url_allow : undefined;
  return { hosts: hosts.length ? hosts : DEFAULT_SERVICE_URL_HOSTS, ...(allow ? { allow } : {}) };
}

const hostMatches = (hostname: string, pattern: string): boolean => {
  const p = pattern.toLowerCase();
  return p.startsWith('*.') ? hostname.endsWith(p.slice(1)) : hostname === p;
};

/** Why `serviceUrl` may not be answered, or undefined when it may. */
export function serviceUrlProblem(serviceUrl: string, policy: ServiceUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    return 'serviceUrl is not a URL';
  }
  if (url.username || url.password) return 'serviceUrl carries credentials';
  if (policy.allow && url.origin === new URL(policy.allow).origin) return undefined;
  if (url.protocol !== 'https:') return `serviceUrl ${url.origin} is not https`;
  if (policy.hosts.some((h) => hostMatches(url.hostname, h))) return undefined;
  return `serviceUrl host ${url.hostname} is not a Bot Framework service URL host (service_url_hosts: ${policy.hosts.join(', ')}) nor service_url_allow`;
}

/** The connector URL of a path under serviceUrl (which ends with a path such as /amer/ that must be kept). */
export function connectorUrl(serviceUrl: string, path: string): string {
  const base = serviceUrl.endsWith('/') ? serviceUrl : `${serviceUrl}/`;
  return new URL(path, base).toString();
}
