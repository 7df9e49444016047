/**
 * The "platform" behind the test sidecars (fixtures/sidecar.mjs and sidecar.py): a loopback TCP server the sidecar
 * connects to. It records every command the sidecar received (send, typing, ready_ack, heartbeat, shutdown) and the
 * environment it ran with, and injects frames for the sidecar to print; frames injected while no sidecar is
 * connected wait for the next one, so nothing is lost across a restart.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import readline from 'node:readline';

export interface Frame {
  method: string;
  // null too: a child may send `"params": null`, which the adapter tolerates.
  params?: Record<string, unknown> | null;
}

export interface SidecarPlatform {
  port: number;
  token: string;
  commands: Frame[];
  hellos: Array<{ env: Record<string, string>; pid: number }>;
  signals: string[];
  /** Prints the frame (or a raw line) on the sidecar's stdout. */
  emit(frame: Frame | string): void;
  message(chat: string, text: string, extra?: Record<string, unknown>): void;
  sent(chat: string, thread?: string): string[];
  count(method: string, chat?: string): number;
  /** Closes the sidecar's connection (it exits and is restarted). */
  drop(): void;
  connected(): boolean;
  stop(): Promise<void>;
}

export async function startSidecarPlatform(): Promise<SidecarPlatform> {
  const sockets = new Set<net.Socket>();
  const pending: string[] = [];
  const platform: Omit<SidecarPlatform, 'port'> & { port: number } = {
    port: 0,
    token: `fixture-token-${randomUUID()}`,
    commands: [],
    hellos: [],
    signals: [],
    emit(frame) {
      const line = `${JSON.stringify({ emit: frame })}\n`;
      const [socket] = sockets;
      if (socket) socket.write(line);
      else pending.push(line);
    },
    message(chat, text, extra = {}) {
      platform.emit({
        method: 'message',
        params: {
          user_id: `user-${chat}`,
          user_name: 'Alice',
          content: { Text: text },
          text,
          channel_id: chat,
          message_id: randomUUID(),
          platform: 'fixture',
          ...extra,
        },
      });
    },
    sent(chat, thread) {
      return platform.commands
        .filter((c) => c.method === 'send' && c.params?.channel_id === chat && (thread === undefined || c.params?.thread_id === thread))
        .map((c) => String(c.params?.text));
    },
    count(method, chat) {
      return platform.commands.filter((c) => c.method === method && (chat === undefined || c.params?.channel_id === chat)).length;
    },
    drop() {
      for (const socket of sockets) socket.destroy();
      // Gone at once: what is injected next waits for the next sidecar.
      sockets.clear();
    },
    connected: () => sockets.size > 0,
    stop: () => new Promise<void>((resolve) => (platform.drop(), server.close(() => resolve()))),
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    readline.createInterface({ input: socket }).on('line', (line) => {
      const msg = JSON.parse(line) as { hello?: SidecarPlatform['hellos'][number]; command?: Frame; signal?: string };
      if (msg.hello) {
        platform.hellos.push(msg.hello);
        // Queued frames go once the sidecar said hello (it is reading the socket by then).
        for (const queued of pending.splice(0)) socket.write(queued);
      }
      if (msg.command) platform.commands.push(msg.command);
      if (msg.signal) platform.signals.push(msg.signal);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  platform.port = (server.address() as net.AddressInfo).port;
  return platform;
}
