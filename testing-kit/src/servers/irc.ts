/**
 * A real IRC server for tests: Debian's ngircd on 127.0.0.1, configured in a temp folder (no DNS or ident lookups,
 * no PAM, flood penalties off so a test can send quickly, short ping timeouts so a dead client is noticed in seconds),
 * in the foreground as an unprivileged user and stopped by its pid.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, LOOPBACK, missingBinary, runServer, serverDir } from './process.ts';

const NGIRCD = '/usr/sbin/ngircd';

/** Why an IRC test cannot run here (one line naming the package), or undefined when ngircd is installed. */
export function ircServerMissing(): string | undefined {
  return missingBinary(NGIRCD, 'ngircd');
}

export interface IrcServerOptions {
  /** The server password (PASS) every client must give; none by default. */
  password?: string;
  /** Seconds of silence before the server PINGs a client, and again before it drops one that did not PONG. */
  pingTimeout?: number;
  /** IRC operator accounts (name → password), for a test that acts as the server's operator (OPER, then KILL). */
  operators?: Record<string, string>;
}

export interface IrcServer {
  host: string;
  port: number;
  /** The server's name as it introduces itself (the prefix of its numerics). */
  name: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startIrcServer(options: IrcServerOptions = {}): Promise<IrcServer> {
  const missing = ircServerMissing();
  if (missing) throw new Error(missing);
  const dir = serverDir('ngircd');
  const port = await freePort();
  const name = 'irc.talon.test';
  const ping = options.pingTimeout ?? 30;
  const includes = path.join(dir, 'conf.d');
  mkdirSync(includes);
  const conf = [
    '[Global]',
    `Name = ${name}`,
    'Info = Talon test server',
    'AdminInfo1 = Talon tests',
    'AdminInfo2 = 127.0.0.1',
    'AdminEMail = tests@talon.test',
    `Listen = ${LOOPBACK}`,
    `Ports = ${port}`,
    'MotdPhrase = Talon test server',
    `PidFile = ${path.join(dir, 'ngircd.pid')}`,
    ...(options.password ? [`Password = ${options.password}`] : []),
    '[Limits]',
    // ngircd's default NICKLEN is 9, shorter than most bot names.
    'MaxNickLength = 30',
    // 0 turns the per-command penalty (ngircd's flood control) off: tests send bursts.
    'MaxPenaltyTime = 0',
    `PingTimeout = ${ping}`,
    `PongTimeout = ${ping}`,
    'MaxConnectionsIP = 0',
    '[Options]',
    'DNS = no',
    'Ident = no',
    'PAM = no',
    // The Debian package reads /etc/ngircd's snippets otherwise; an empty folder keeps the test's config whole.
    `IncludeDir = ${includes}`,
    ...Object.entries(options.operators ?? {}).flatMap(([operator, password]) => ['[Operator]', `Name = ${operator}`, `Password = ${password}`]),
    '',
  ].join('\n');
  const confFile = path.join(dir, 'ngircd.conf');
  writeFileSync(confFile, conf, { mode: 0o644 });
  const server = await runServer({ name: 'ngircd', command: NGIRCD, args: ['--nodaemon', '--config', confFile], port, dir });
  return { host: LOOPBACK, port, name, pid: server.pid, stop: server.stop };
}
