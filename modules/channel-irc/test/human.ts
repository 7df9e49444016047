/**
 * The person on the other side: a plain IRC client on a raw socket (no library between the test and the bytes), which
 * registers, answers PINGs, joins channels and records every line the server sends it, with when it arrived.
 */
import net from 'node:net';
import { waitFor } from '@talon/testing';

export interface Line {
  raw: string;
  /** Bytes of the line as the server sent it, CRLF included. */
  bytes: number;
  at: number;
  prefix: string;
  command: string;
  params: string[];
}

export class Human {
  readonly lines: Line[] = [];
  private socket!: net.Socket;
  private buffer = Buffer.alloc(0);

  private constructor(readonly nick: string) {}

  static async connect(port: number, nick: string, password?: string): Promise<Human> {
    const h = new Human(nick);
    h.socket = net.connect(port, '127.0.0.1');
    h.socket.on('data', (data) => h.read(data));
    h.socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => h.socket.once('connect', resolve).once('error', reject));
    if (password) h.send(`PASS ${password}`);
    h.send(`NICK ${nick}`);
    h.send(`USER ${nick} 0 * :${nick}`);
    await waitFor(() => h.lines.find((l) => l.command === '001' || l.command === 'ERROR' || l.command === '433'), 10_000, `${nick} to register`);
    return h;
  }

  send(line: string): void {
    this.socket.write(`${line}\r\n`);
  }

  async join(channel: string): Promise<void> {
    this.send(`JOIN ${channel}`);
    await waitFor(
      () => this.lines.find((l) => l.command === '366' && l.params[1]?.toLowerCase() === channel.toLowerCase()),
      10_000,
      `${this.nick} to join ${channel}`,
    );
  }

  say(target: string, text: string): void {
    this.send(`PRIVMSG ${target} :${text}`);
  }

  /** PRIVMSGs from `from` to `to`, in arrival order. */
  messages(from: string, to: string): Line[] {
    return this.lines.filter((l) => l.command === 'PRIVMSG' && l.prefix.split('!')[0] === from && l.params[0].toLowerCase() === to.toLowerCase());
  }

  close(): void {
    this.socket.destroy();
  }

  private read(data: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (let end = this.buffer.indexOf('\n'); end >= 0; end = this.buffer.indexOf('\n')) {
      const bytes = this.buffer.subarray(0, end + 1);
      this.buffer = this.buffer.subarray(end + 1);
      const raw = bytes.toString('utf8').replace(/\r?\n$/, '');
      const line = parse(raw, bytes.length);
      if (line.command === 'PING') this.send(`PONG :${line.params[0] ?? ''}`);
      this.lines.push(line);
    }
  }
}

function parse(raw: string, bytes: number): Line {
  let rest = raw;
  let prefix = '';
  if (rest.startsWith(':')) {
    const space = rest.indexOf(' ');
    prefix = rest.slice(1, space);
    rest = rest.slice(space + 1);
  }
  const colon = rest.indexOf(' :');
  const trailing = colon >= 0 ? rest.slice(colon + 2) : undefined;
  const words = (colon >= 0 ? rest.slice(0, colon) : rest).split(' ').filter(Boolean);
  const [command, ...params] = words;
  return { raw, bytes, at: Date.now(), prefix, command, params: trailing === undefined ? params : [...params, trailing] };
}
