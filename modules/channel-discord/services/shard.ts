/**
 * A WebSocketShard that can be stopped for good. @discordjs/ws reconnects from one place: `destroy({ recover })`
 * sleeps 500 ms and opens a new socket, and the shard calls it itself on a close, a zombie heartbeat, RECONNECT,
 * INVALID_SESSION or a timed-out wait (including the wait for HELLO that its own destroy cuts short). The library has
 * no "stopped" state, so without this a stopped adapter kept reconnecting — to a server that is gone, every 500 ms,
 * for ever. Once `stop` has begun, every destroy drops `recover`, and `stop` returns only when the socket is closed
 * and no reconnect scheduled before the stop is still pending.
 * Two destroys must not overlap: the second clears the socket's close handler the first is waiting on, and the first
 * never returns. After the stop every destroy is the same final one, so a destroy while one is under way joins it.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocketShard, WebSocketShardEvents, WebSocketShardStatus, type IContextFetchingStrategy, type WebSocketShardDestroyOptions } from '@discordjs/ws';

const STOPPED = { code: 1000, reason: 'stopped' } as const;

export class StoppableShard extends WebSocketShard {
  private stopping = false;
  /** Whether the current socket has said HELLO, i.e. is open (the library closes only an open socket). */
  private helloSeen = false;
  /** destroy calls not finished: one with `recover` ends by opening a new socket. */
  private readonly destroying = new Set<Promise<void>>();
  /** The destroy under way that began after the stop (it has no `recover`, so nothing follows it). */
  private final: Promise<void> | undefined;

  constructor(strategy: IContextFetchingStrategy, id: number) {
    super(strategy, id);
    // A socket opened after the stop (by a reconnect scheduled before it) is closed on its HELLO. In a microtask: the
    // library arms its first heartbeat right after emitting HELLO, and only a destroy after that cancels it (one run
    // inside the emit let the heartbeat start an interval on the closed shard that kept the process alive).
    this.on(WebSocketShardEvents.Hello, () => {
      this.helloSeen = true;
      if (this.stopping) queueMicrotask(() => void this.destroy(STOPPED));
    });
  }

  override destroy(options: WebSocketShardDestroyOptions = {}): Promise<void> {
    this.helloSeen = false;
    if (this.final) return this.final;
    const { recover, ...final } = options;
    const destroyed = super.destroy(this.stopping ? final : { ...final, ...(recover === undefined ? {} : { recover }) });
    if (this.stopping) this.final = destroyed;
    this.destroying.add(destroyed);
    void destroyed
      .catch(() => undefined)
      .finally(() => {
        this.destroying.delete(destroyed);
        if (this.final === destroyed) this.final = undefined;
      });
    return destroyed;
  }

  /**
   * Closes the socket and waits for reconnects already scheduled, at most `waitMs`. A socket still in its handshake is
   * not destroyed (the library would forget it without closing it, and it would open unowned): its HELLO or its
   * failure ends it. Past `waitMs` whatever is left ends by itself without reconnecting (ws's handshake timeout bounds
   * it).
   */
  async stop(waitMs: number): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      const idle = this.status === WebSocketShardStatus.Idle;
      if (idle && !this.destroying.size) return;
      // A destroy under way (one begun before the stop may still be closing its socket) is waited for, not joined.
      if (!idle && !this.destroying.size && (this.status !== WebSocketShardStatus.Connecting || this.helloSeen)) {
        await this.destroy(STOPPED);
        continue;
      }
      const settled = new AbortController();
      await Promise.race([
        ...this.destroying,
        once(this, WebSocketShardEvents.Hello, { signal: settled.signal }),
        once(this, WebSocketShardEvents.Closed, { signal: settled.signal }),
        sleep(deadline - Date.now(), undefined, { signal: settled.signal }),
      ]).catch(() => undefined);
      settled.abort();
    }
  }
}
