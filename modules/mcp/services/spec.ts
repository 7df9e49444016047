/**
 * What one MCP server is: its transport and the values handed to it. Specs
 * come from three places — config.toml [[mcp_servers]], the raw API shape
 * and a catalogue install — and are checked here once, the same way.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { badRequest } from '@talon/module-sdk';

export type TransportType = 'stdio' | 'sse' | 'http';

export interface TransportSpec {
  type: TransportType;
  command?: string;
  args: string[];
  url?: string;
}

export interface ServerSpec {
  id: string;
  name: string;
  source: 'api' | 'config';
  templateId?: string;
  transport: TransportSpec;
  /** Environment of a stdio child, on top of a small safe baseline (values are secrets). */
  env: Record<string, string>;
  /** Headers of an sse or http server (values are secrets). */
  headers: Record<string, string>;
  timeoutSecs?: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** A server command is a program, never a shell that would run a command line (the reference refuses these too). */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'csh', 'tcsh', 'fish', 'ash', 'busybox', 'cmd', 'cmd.exe', 'powershell', 'pwsh']);

export function checkName(name: string): string {
  if (!NAME.test(name)) throw badRequest(`server name '${name}' must be 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit`);
  return name;
}

/** 'http', 'streamable_http' and 'streamable-http' are one transport (Streamable HTTP). */
export function transportType(type: string): TransportType {
  if (type === 'stdio' || type === 'sse') return type;
  if (type === 'http' || type === 'streamable_http' || type === 'streamable-http') return 'http';
  throw badRequest(`transport.type '${type}' is not one of stdio, sse, http (Streamable HTTP)`);
}

export function checkTransport(t: { type: string; command?: string; args?: readonly string[]; url?: string }): TransportSpec {
  const type = transportType(t.type);
  if (type === 'stdio') {
    const command = t.command?.trim();
    if (!command) throw badRequest('a stdio server needs transport.command');
    if (command.split(/[\\/]/).includes('..')) throw badRequest(`command '${command}' must not contain '..'`);
    if (SHELLS.has(path.basename(command).toLowerCase())) throw badRequest(`command '${command}' is a shell: name the server program itself`);
    return { type, command, args: [...(t.args ?? [])] };
  }
  if (!t.url) throw badRequest(`a ${type} server needs transport.url`);
  let url: URL;
  try {
    url = new URL(t.url);
  } catch {
    throw badRequest(`transport.url '${t.url}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`transport.url must be http or https, got '${url.protocol}'`);
  if (url.username || url.password) throw badRequest('transport.url must not carry credentials: use headers');
  return { type, args: [], url: url.toString() };
}

export function checkEnv(env: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(env)) if (!ENV_NAME.test(name)) throw badRequest(`environment variable name '${name}' is not valid`);
  return env;
}

export function checkHeaders(headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw badRequest(`header name '${name}' is not valid`);
    if (/[\r\n]/.test(value)) throw badRequest(`header '${name}' has a line break in its value`);
  }
  return headers;
}

/** 'NAME=value' → value; 'NAME' → the service's own value of NAME (config.toml entries). */
export function parseEnvList(entries: readonly string[], processEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    else if (processEnv[entry] !== undefined) env[entry] = processEnv[entry];
  }
  return checkEnv(env);
}

/** 'Name: value' lines → object. */
export function parseHeaderList(entries: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw badRequest(`header '${entry}' is not 'Name: value'`);
    headers[entry.slice(0, colon).trim()] = entry.slice(colon + 1).trim();
  }
  return checkHeaders(headers);
}

/** A stable id for a server of config.toml (UUID-shaped, from its name), so its URL survives restarts. */
export function configServerId(name: string): string {
  const h = createHash('sha256').update(`mcp-config-server:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** What a connection depends on: a change means reconnecting (reload "moves" the server). */
export function fingerprint(spec: ServerSpec): string {
  const { transport, env, headers, timeoutSecs } = spec;
  return createHash('sha256').update(JSON.stringify({ transport, env, headers, timeoutSecs })).digest('hex');
}

/** `${NAME}` in a stdio server's arguments becomes the value of NAME from the server's own env; other text stays. */
export function expandArgs(args: readonly string[], env: Record<string, string>): string[] {
  return args.map((arg) => arg.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => env[name] ?? whole));
}
