import type { Store } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { Embedder, EmbeddingTarget } from './embedder.ts';
import type { VectorIndex } from './vectors.ts';

const BATCH = 64;

/**
 * Computes embeddings off the request path: entries without a vector for the
 * configured model are embedded in batches, in the background. A failure backs
 * off (up to a minute) and the entries stay pending; search works on FTS5 meanwhile.
 */
export class EmbeddingQueue {
  private running = false;
  private again = false;
  private failures = 0;
  private notBefore = 0;
  private stopped = false;
  /** The call in flight, aborted on stop. */
  private inflight?: AbortController;

  constructor(
    private readonly store: Store,
    private readonly vectors: VectorIndex,
    private readonly target: () => EmbeddingTarget | undefined,
    private readonly embedder: Embedder,
    private readonly log: Logger,
    /** Runs `fn` soon; the module's tracks the promise it returns (so a retiring copy waits for the run). */
    private readonly schedule: (fn: () => Promise<void>) => void,
  ) {}

  /** Asks for a run soon (after the current one if one is going). */
  kick(): void {
    if (this.stopped || !this.target()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(() =>
      this.run().catch((err: unknown) => {
        if (!this.stopped) this.log.warn({ err }, 'memory embedding run failed; will retry');
      }),
    );
  }

  stop(): void {
    this.stopped = true;
    this.inflight?.abort();
  }

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    if (Date.now() < this.notBefore) return;
    this.running = true;
    try {
      do {
        this.again = false;
        const target = this.target();
        if (!target) break;
        const rows = await this.store.many<{ seq: number; content: string; agent_id: string | null }>(
          `SELECT e.seq, e.content, e.agent_id FROM memory_entries e LEFT JOIN memory_embeddings m ON m.entry_seq = e.seq AND m.model = ?
           WHERE m.entry_seq IS NULL ORDER BY e.seq LIMIT ?`,
          [target.model, BATCH],
        );
        if (!rows.length) break;
        let vectors: Float32Array[];
        this.inflight = new AbortController();
        try {
          vectors = await this.embedder.embed(
            target,
            rows.map((r) => r.content),
            { timeoutMs: 30_000, retries: 2, signal: this.inflight.signal },
          );
        } catch (err) {
          if (this.stopped) break;
          this.failures++;
          this.notBefore = Date.now() + Math.min(60_000, 1000 * 2 ** this.failures);
          this.log.warn({ err: (err as Error).message, pending: rows.length }, 'memory embedding failed; will retry');
          break;
        }
        this.failures = 0;
        if (this.stopped) break;
        for (const dim of new Set(vectors.map((v) => v.length))) await this.vectors.ensureTable(dim);
        await this.store.tx(async (t) => {
          for (let i = 0; i < rows.length; i++) {
            // The entry may have been deleted or edited while the call ran (here or in another process).
            const still = await t.one<{ content: string }>('SELECT content FROM memory_entries WHERE seq = ?', [rows[i].seq]);
            if (still?.content === rows[i].content) await this.vectors.put(t, rows[i].seq, rows[i].agent_id, target.model, vectors[i]);
          }
        });
        this.again = true;
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }
}
