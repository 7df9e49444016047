/**
 * The SSRF decision: may a module connect to this resolved address? Only
 * global unicast addresses pass, unless the caller's operator allow-listed
 * the host, its origin or a range. Pure: tested with a table of addresses,
 * never by connecting to them.
 */
import ipaddr from 'ipaddr.js';
import picomatch from 'picomatch';

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export interface SsrfAllowList {
  /** Host globs ("*.internal.example"), literal IPs or CIDRs. */
  allow_hosts: readonly string[];
  allow_cidrs: readonly string[];
  /** Exact 'host' or 'host:port' entries: only a URL naming that origin is exempt. */
  allow_origins?: readonly string[];
}

/** '*' matches anything, including '.' (host globs such as "*.corp.example"). */
function globMatch(pattern: string, value: string): boolean {
  return pattern === '*' || picomatch.isMatch(value, pattern, { bash: true, dot: true, nocase: false });
}

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/** ipaddr.js range names, in words for the error text. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (100.64.0.0/10)',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  discard: 'discard-only',
};

function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return undefined;
  const parsed = ipaddr.parse(bare);
  // ::ffff:a.b.c.d reaches the IPv4 host: judge the IPv4 address.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) return (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed;
}

function inCidrs(addr: ipaddr.IPv4 | ipaddr.IPv6, entries: readonly string[]): boolean {
  for (const entry of entries) {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry);
        const candidate = range.kind() === addr.kind() ? addr : addr.kind() === 'ipv4' ? (addr as ipaddr.IPv4).toIPv4MappedAddress() : undefined;
        if (candidate && candidate.match([range, bits] as never)) return true;
      } else if (ipaddr.isValid(entry)) {
        const one = parse(entry);
        if (one && one.kind() === addr.kind() && one.toNormalizedString() === addr.toNormalizedString()) return true;
      }
    } catch {
      // a malformed entry never allows anything
    }
  }
  return false;
}

/** Whether hostname is exempt by name (a glob of allow_hosts that is not an IP or CIDR). */
export function hostAllowListed(hostname: string, list: SsrfAllowList): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return list.allow_hosts.some((p) => !p.includes('/') && !ipaddr.isValid(p) && globMatch(p.toLowerCase(), host));
}

/** Whether the URL's host (and port) is one of allow_origins; hosts compare without brackets and case. */
export function originAllowListed(hostname: string, port: number, list: SsrfAllowList): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return (list.allow_origins ?? []).some((entry) => {
    const e = entry.toLowerCase();
    // '[::1]:8080' names host ::1 and port 8080; '[::1]' or '::1' the host alone.
    const bracketed = /^\[(.*)\](?::(\d+))?$/.exec(e);
    if (bracketed) return bracketed[1] === host && (bracketed[2] === undefined || Number(bracketed[2]) === port);
    return e === host || e === `${host}:${port}`;
  });
}

export function checkAddress(address: string, list: SsrfAllowList = { allow_hosts: [], allow_cidrs: [] }): AddressVerdict {
  const addr = parse(address);
  if (!addr) return { allowed: false, reason: `'${address}' is not an IP address` };
  if (inCidrs(addr, [...list.allow_cidrs, ...list.allow_hosts])) return { allowed: true };
  const normalized = addr.toString();
  if (METADATA.has(normalized) || METADATA.has(addr.toNormalizedString())) {
    return { allowed: false, reason: `${address} is a cloud metadata address` };
  }
  const range = addr.range();
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: `${address} is a ${RANGE_WORDS[range] ?? range} address` };
}
