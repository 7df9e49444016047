import ipaddr from 'ipaddr.js';
import { ConfigError } from '@talon/module-sdk';

/** Headers a proxy adds: a request that carries one came from somewhere else, whatever the socket says. */
const FORWARDED = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

/**
 * Every request asks about its peer address and its Host, and parsing them costs more than the rest of the check:
 * answers are kept by their input. Bounded: many distinct inputs only empty the memory (of short strings).
 */
function remembered<T>(answer: (input: string) => T): (input: string) => T {
  const known = new Map<string, T>();
  return (input) => {
    if (input.length > 300) return answer(input); // no address or host name is that long: not worth keeping
    if (known.has(input)) return known.get(input)!;
    const value = answer(input);
    if (known.size >= 1024) known.clear();
    known.set(input, value);
    return value;
  };
}

export const isLoopback = remembered((address: string): boolean => {
  if (!ipaddr.isValid(address)) return address === 'localhost';
  const ip = ipaddr.process(address);
  return ip.range() === 'loopback';
});

/** Why a request may not use the API without a key (undefined: it comes from this machine, directly). */
export function keylessRefusal(ip: string, headers: Record<string, unknown>): string | undefined {
  if (!isLoopback(ip)) return 'this service has no api_key and serves only clients on this machine (set api_key to serve the network)';
  if (FORWARDED.some((h) => headers[h] !== undefined)) return 'this service has no api_key and does not serve requests relayed by a proxy (set api_key)';
  return undefined;
}

/**
 * Without a key the API is for this machine only, and a browser page can still reach it through DNS rebinding (its
 * own name resolved to 127.0.0.1): such requests name that page's host. Undefined when Host names this machine.
 */
export const foreignHost = (host: string | undefined): string | undefined => hostVerdict(host ?? '');

const hostVerdict = remembered((host: string): string | undefined => {
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (name === '' || name === 'localhost' || name.endsWith('.localhost') || isLoopback(name)) return undefined;
  return `Host '${host}' is not this machine: without an api_key the service answers only requests addressed to localhost (DNS rebinding protection)`;
});

/** Start-up check: a keyless API never listens beyond loopback unless explicitly allowed. */
export function checkKeylessListen(listen: string, apiKey: string, allowed: boolean): void {
  const host = /^\[?([^\]]+?)\]?:\d+$/.exec(listen)?.[1] ?? listen;
  if (apiKey || allowed || isLoopback(host)) return;
  throw new ConfigError(
    `api_listen = "${listen}" serves the network, but api_key is empty: set api_key (at least 16 random characters), listen on 127.0.0.1, or set [auth] allow_keyless_network = true to serve the network without a key`,
  );
}
