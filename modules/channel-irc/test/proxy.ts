/**
 * A TCP relay between the adapter and ngircd, so a test can play the network: drop every connection (the server
 * going away) or keep the sockets open while forwarding nothing (a connection that looks up but is dead).
 */
import net from 'node:net';

export class Relay {
  /** Connections accepted so far. */
  accepted = 0;
  private silent = false;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private server!: net.Server;

  private constructor(private readonly target: number) {}

  static async start(target: number): Promise<Relay> {
    const r = new Relay(target);
    r.server = net.createServer((client) => r.accept(client));
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Every relayed connection closed at once, as when the server goes away. */
  dropAll(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }

  /** While on, bytes are swallowed in both directions; the sockets stay open. */
  blackhole(on: boolean): void {
    this.silent = on;
  }

  async stop(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    const upstream = net.connect(this.target, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('data', (d) => this.silent || upstream.write(d));
    upstream.on('data', (d) => this.silent || client.write(d));
    for (const s of pair) s.on('close', end).on('error', end);
  }
}
