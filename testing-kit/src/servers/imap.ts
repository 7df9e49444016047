/**
 * A real IMAP server for tests: Debian's dovecot (imapd) on 127.0.0.1, configured in a temp folder and run in the
 * foreground as an unprivileged user: a passwd-file of the given users, plaintext LOGIN/AUTH PLAIN allowed without TLS
 * (loopback only), a maildir per user under the temp folder, IDLE as dovecot always offers it. Mail arrives the way a
 * local delivery agent puts it there: written to the maildir's tmp/ and renamed into new/, which dovecot notices
 * (and reports to an IDLE-ing client).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, LOOPBACK, missingBinary, runServer, serverDir, serverIdentity } from './process.ts';

const DOVECOT = '/usr/sbin/dovecot';

/** Why an IMAP test cannot run here (one line naming the package), or undefined when dovecot is installed. */
export function imapServerMissing(): string | undefined {
  return missingBinary(DOVECOT, 'dovecot-imapd');
}

export interface ImapServerOptions {
  /** user name → password; each gets a mailbox (INBOX) of its own. */
  users: Record<string, string>;
}

export interface ImapServer {
  host: string;
  port: number;
  pid: number;
  /** Puts a raw RFC 5322 message (CRLF or LF lines) into the user's INBOX as new mail; answers its maildir file name. */
  deliver(user: string, rawMessage: string | Buffer): string;
  /**
   * Ends every logged-in IMAP session server-side, as a server restart or an admin's kick does to its clients; answers
   * how many were ended. dovecot serves each session in an `imap` child of its master, which this kills.
   */
  dropSessions(): number;
  stop(): Promise<void>;
}

export async function startImapServer(options: ImapServerOptions): Promise<ImapServer> {
  const missing = imapServerMissing();
  if (missing) throw new Error(missing);
  for (const [user, password] of Object.entries(options.users)) {
    // The passwd-file is colon-separated lines; a name or password holding ':' or a line break would corrupt it.
    if (!/^[A-Za-z0-9._@+-]+$/.test(user)) throw new Error(`IMAP user name '${user}' must be letters, digits or ._@+-`);
    if (/[:\r\n]/.test(password)) throw new Error(`the password of IMAP user '${user}' must not hold ':' or a line break`);
  }
  const dir = serverDir('dovecot');
  const port = await freePort();
  const { uid, gid, root } = serverIdentity();
  const own = (p: string) => {
    if (root) chownSync(p, uid, gid);
  };
  const mailRoot = path.join(dir, 'mail');
  const usersFile = path.join(dir, 'users');
  for (const sub of ['run', 'state', 'mail']) {
    mkdirSync(path.join(dir, sub));
    own(path.join(dir, sub));
  }
  writeFileSync(
    usersFile,
    Object.entries(options.users)
      .map(([u, p]) => `${u}:{PLAIN}${p}:${uid}:${gid}::${path.join(mailRoot, u)}\n`)
      .join(''),
    { mode: 0o600 },
  );
  own(usersFile);
  const user = root ? 'nobody' : String(uid);
  const conf = `
base_dir = ${path.join(dir, 'run')}
state_dir = ${path.join(dir, 'state')}
instance_name = talon-test-${port}
protocols = imap
listen = ${LOOPBACK}
ssl = no
# Plaintext passwords are fine here: the server listens on loopback only and the passwords are test fixtures.
disable_plaintext_auth = no
auth_mechanisms = plain login
# A refused login answers at once (dovecot delays it 2 s by default against password guessing).
auth_failure_delay = 0
# Every process runs as the one unprivileged identity that owns the temp folder.
default_login_user = ${user}
default_internal_user = ${user}
default_internal_group = ${root ? 'nogroup' : String(gid)}
log_path = /dev/stderr
info_log_path = /dev/stderr
mail_location = maildir:${mailRoot}/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${usersFile}
}
userdb {
  driver = passwd-file
  args = username_format=%u ${usersFile}
}
service imap-login {
  # chroot needs root; the unprivileged server cannot use it.
  chroot =
  inet_listener imap {
    address = ${LOOPBACK}
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`;
  const confFile = path.join(dir, 'dovecot.conf');
  writeFileSync(confFile, conf, { mode: 0o644 });
  const server = await runServer({ name: 'dovecot', command: DOVECOT, args: ['-F', '-c', confFile], port, dir });
  let sequence = 0;
  const deliver = (to: string, rawMessage: string | Buffer): string => {
    if (!(to in options.users)) throw new Error(`no IMAP user '${to}' (users: ${Object.keys(options.users).join(', ')})`);
    const maildir = path.join(mailRoot, to);
    for (const sub of ['', 'tmp', 'new', 'cur']) {
      mkdirSync(path.join(maildir, sub), { recursive: true });
      own(path.join(maildir, sub));
    }
    // The maildir delivery protocol: a unique name, written in tmp/, then renamed into new/ (atomic for the reader).
    const name = `${Date.now()}.P${process.pid}Q${++sequence}.talon-test`;
    const temp = path.join(maildir, 'tmp', name);
    writeFileSync(temp, rawMessage, { mode: 0o600 });
    own(temp);
    renameSync(temp, path.join(maildir, 'new', name));
    return name;
  };
  const dropSessions = (): number => {
    let children: string;
    try {
      children = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(server.pid)], { encoding: 'utf8' });
    } catch {
      return 0; // ps exits 1 when the master has no children
    }
    const sessions = children
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([pid, comm]) => Number(pid) > 0 && comm === 'imap')
      .map(([pid]) => Number(pid));
    for (const pid of sessions) process.kill(pid, 'SIGKILL');
    return sessions.length;
  };
  return { host: LOOPBACK, port, pid: server.pid, deliver, dropSessions, stop: server.stop };
}
