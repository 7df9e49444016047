/**
 * A real XMPP server for tests: Debian's prosody on 127.0.0.1, configured in a temp folder (plain c2s with PLAIN
 * allowed and no TLS, s2s and HTTP off, stream management (XEP-0198) with a short hibernation, a MUC component at
 * conference.localhost, offline storage for messages to an absent user, the admin shell on a socket in the data folder),
 * accounts registered with prosodyctl before it starts, run in the foreground as an unprivileged user and stopped by
 * its pid.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, LOOPBACK, missingBinary, runServer, serverDir, serverIdentity } from './process.ts';

const PROSODY = '/usr/bin/prosody';
const PROSODYCTL = '/usr/bin/prosodyctl';
const run = promisify(execFile);

/** Why an XMPP test cannot run here (one line naming the package), or undefined when prosody is installed. */
export function xmppServerMissing(): string | undefined {
  return missingBinary(PROSODY, 'prosody') ?? missingBinary(PROSODYCTL, 'prosody');
}

export interface XmppServerOptions {
  /** Accounts on the `localhost` host: user name → password. */
  accounts: Record<string, string>;
  /** Seconds a session dropped without a stream close stays resumable (XEP-0198 hibernation); 60 by default. */
  hibernationSeconds?: number;
}

export interface XmppServer {
  host: string;
  port: number;
  /** The virtual host the accounts live on. */
  domain: 'localhost';
  /** The MUC component's domain: rooms are `<name>@conference.localhost`, created by the first to join. */
  muc: 'conference.localhost';
  /** `xmpp://127.0.0.1:<port>`, the client's `service`. */
  service: string;
  pid: number;
  /** Runs one command of prosody's admin shell (e.g. `c2s:close('bot@localhost')`) and returns its output. */
  shell(command: string): Promise<string>;
  stop(): Promise<void>;
}

const lua = (s: string) => JSON.stringify(s);

export async function startXmppServer(options: XmppServerOptions): Promise<XmppServer> {
  const missing = xmppServerMissing();
  if (missing) throw new Error(missing);
  const dir = serverDir('prosody');
  const data = path.join(dir, 'data');
  const certs = path.join(dir, 'certs');
  const { uid, gid, root } = serverIdentity();
  for (const d of [data, certs]) mkdirSync(d, { mode: 0o750 });
  if (root) for (const d of [data, certs]) chownSync(d, uid, gid);
  const port = await freePort();
  const conf = [
    `pidfile = ${lua(path.join(dir, 'prosody.pid'))}`,
    `data_path = ${lua(data)}`,
    `certificates = ${lua(certs)}`,
    // prosodyctl run as root switches to this identity, the one the server runs under (serverIdentity).
    ...(root ? ['prosody_user = "nobody"', 'prosody_group = "nogroup"'] : []),
    `interfaces = { ${lua(LOOPBACK)} }`,
    `c2s_ports = { ${port} }`,
    `c2s_interfaces = { ${lua(LOOPBACK)} }`,
    's2s_ports = { }',
    `admin_socket = ${lua(path.join(data, 'prosody.sock'))}`,
    'modules_enabled = { "roster", "saslauth", "disco", "ping", "presence", "message", "iq", "smacks", "offline", "admin_shell", "posix" }',
    'modules_disabled = { "s2s", "tls", "http" }',
    // Loopback only: no TLS, and PLAIN allowed over it (the test clients sign in with SCRAM or PLAIN).
    'c2s_require_encryption = false',
    'allow_unencrypted_plain_auth = true',
    'authentication = "internal_hashed"',
    'storage = "internal"',
    'log = { { levels = { min = "warn" }, to = "console" } }',
    `smacks_hibernation_time = ${options.hibernationSeconds ?? 60}`,
    // No flood limits: the tests send bursts.
    'limits = { }',
    'VirtualHost "localhost"',
    'Component "conference.localhost" "muc"',
    // Rooms open at once for whoever joins first (no XEP-0045 configuration step): the tests create them by joining.
    '  muc_room_locking = false',
    '',
  ].join('\n');
  const confFile = path.join(dir, 'prosody.cfg.lua');
  writeFileSync(confFile, conf, { mode: 0o644 });
  const ctl = (...args: string[]) => run(PROSODYCTL, ['--config', confFile, ...args], { cwd: dir, timeout: 20_000 });
  try {
    // Each account is a file of its own: prosodyctl runs side by side.
    await Promise.all(Object.entries(options.accounts).map(([user, password]) => ctl('register', user, 'localhost', password)));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const server = await runServer({ name: 'prosody', command: PROSODY, args: ['--config', confFile, '-F'], port, dir });
  return {
    host: LOOPBACK,
    port,
    domain: 'localhost',
    muc: 'conference.localhost',
    service: `xmpp://${LOOPBACK}:${port}`,
    pid: server.pid,
    async shell(command) {
      const { stdout } = await ctl('shell', command);
      return stdout;
    },
    stop: server.stop,
  };
}
