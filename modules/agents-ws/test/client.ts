/** A WebSocket chat client for the tests: frames are queued so a test awaits them in order. */
import WebSocket from 'ws';

export type Frame = { type: string } & Record<string, unknown>;

/** A ws client that queues frames so tests can await them in order. */
export class Client {
  readonly frames: Frame[] = [];
  private waiters: Array<() => void> = [];
  closed?: { code: number };
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as Frame);
      this.wake();
    });
    ws.on('close', (code) => {
      this.closed = { code };
      this.wake();
    });
  }
  static open(url: string): Promise<Client> {
    const ws = new WebSocket(url);
    const client = new Client(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }
  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }
  /** The next frame not of the ignored types (agents_updated is skipped unless asked for). */
  async next(ignore: string[] = ['agents_updated'], timeoutMs = 5000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex((f) => !ignore.includes(f.type));
      if (i >= 0) return this.frames.splice(i, 1)[0];
      if (this.closed) throw new Error(`socket closed (${this.closed.code})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no frame in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
  async nextOf(type: string): Promise<Frame> {
    for (;;) {
      const f = await this.next([]);
      if (f.type === type) return f;
    }
  }
  send(value: unknown) {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }
  /** Sends a chat command and returns its command_result (or error) frame. */
  async command(text: string): Promise<Frame> {
    this.send({ type: 'message', content: text });
    return this.next();
  }
}
