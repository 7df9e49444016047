/**
 * An SMTP sink for tests: the `smtp-server` package (nodemailer's server side) on 127.0.0.1, keeping every message it
 * accepts. With `users` it requires AUTH (PLAIN/LOGIN over the plain connection: loopback, test passwords) and refuses
 * wrong credentials with 535, as a submission server does; without, anyone may send.
 */
import type { SMTPServer as SmtpServerClass } from 'smtp-server';
import type { AddressInfo } from 'node:net';
const LOOPBACK = '127.0.0.1';

export interface SmtpSinkOptions {
  /** user name → password; when set, a client must log in before MAIL FROM. */
  users?: Record<string, string>;
}

export interface SmtpMessage {
  /** The envelope sender (MAIL FROM), as the client gave it. */
  from: string;
  /** The envelope recipients (RCPT TO). */
  to: string[];
  /** The user that logged in, when the sink requires AUTH. */
  user?: string;
  /** The message as received (headers and body, CRLF lines). */
  raw: string;
}

export interface SmtpSink {
  host: string;
  port: number;
  /** Every accepted message, in order of arrival. */
  messages: SmtpMessage[];
  stop(): Promise<void>;
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  // Loaded on use: most tests that import the testing kit never start a sink.
  const { SMTPServer } = await import('smtp-server');
  const messages: SmtpMessage[] = [];
  const users = options.users;
  const server: SmtpServerClass = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: !users,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    // stop() waits this long for open client connections before it closes them (the default is 30 s).
    closeTimeout: 1_000,
    onAuth(auth, _session, callback) {
      if (users && auth.username !== undefined && users[auth.username] === auth.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          ...(typeof session.user === 'string' ? { user: session.user } : {}),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    host: LOOPBACK,
    port,
    messages,
    stop: () => (stopped ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
