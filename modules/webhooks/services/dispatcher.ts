/**
 * Drains the delivery journal: due deliveries are claimed (pending → sending, with this node and a lease) a few at a
 * time and sent; a failed attempt is retried with exponential backoff until max_attempts; a webhook that keeps failing
 * is disabled with the reason (its queued deliveries wait for it to be enabled again). Several processes may share
 * the journal: the claim is a conditional update, so exactly one of them sends a delivery. A process that dies with
 * claims leaves them to the others (`ctx.nodes.onDead`) or to the next start; its attempt may have reached the target,
 * so delivery is at least once (receivers de-duplicate by X-Webhook-Id).
 */
import type { NodeAccess } from '@talon/module-sdk';
import type { Logger } from 'pino';
import type { SecretVault } from '@talon/secrets';
import type { NetFetch } from '@talon/net';
import type { WebhooksConfig } from '../config.ts';
import { sendSigned } from './sender.ts';
import type { DeliveryRow, HookStore } from './store.ts';

export interface DispatcherDeps {
  store: HookStore;
  net: () => NetFetch;
  vault: () => SecretVault;
  config: () => WebhooksConfig;
  log: Logger;
  setTimeout: (fn: () => unknown, ms: number) => NodeJS.Timeout;
  /** This process's node id (the claims' owner) and how long a claim lasts. */
  node: Pick<NodeAccess, 'id' | 'leaseMs' | 'active'>;
}

export const secretOwner = (hookId: string) => `webhooks:secret:${hookId}`;

export class Dispatcher {
  private readonly inflight = new Map<number, Promise<void>>();
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private stopped = false;
  /** A pass (claim, then arm the timer) is running; `again`: another was asked for meanwhile. */
  private pumping?: Promise<void>;
  private again = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Starts what is due now and arms a timer for the next due retry. Passes never overlap: one asked for meanwhile follows. */
  pump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pass()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'webhook dispatch pass failed; the next event or retry tries again'))
      .finally(() => {
        this.pumping = undefined;
        if (this.again) {
          this.again = false;
          this.pump();
        }
      });
  }

  /** Resolves once no pass is running (tests, and stop). */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /**
   * Lets attempts in flight end (bounded); the claims of those that did not finish go back to pending at once, so the
   * next copy or another process sends them.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.idle();
    const settled = Promise.allSettled([...this.inflight.values()]);
    const bound = new Promise((r) => setTimeout(r, 2000).unref());
    await Promise.race([settled, bound]);
    this.abort.abort(new Error('the service is stopping'));
    await this.deps.store.release(this.deps.node.id, [...this.inflight.keys()]);
  }

  private async pass(): Promise<void> {
    const { store, config, node } = this.deps;
    const free = config().concurrency - this.inflight.size;
    // A node that no longer beats is gone to the others, who take its claims over: it takes none again.
    if (free > 0 && node.active) {
      for (const row of await store.claim(node.id, Date.now(), free, node.leaseMs)) {
        const run = this.attempt(row)
          .catch((err: unknown) => this.deps.log.warn({ err, delivery: row.id }, 'webhook attempt could not be recorded'))
          .finally(() => {
            this.inflight.delete(row.id);
            this.pump();
          });
        this.inflight.set(row.id, run);
      }
    }
    this.arm(await store.nextDue());
  }

  private arm(at: number | undefined): void {
    if (this.stopped || at === undefined || this.inflight.size >= this.deps.config().concurrency) return;
    if (this.timer && at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.deps.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const { store, config, log, node } = this.deps;
    const hook = await store.get(row.hook_id);
    if (!hook || hook.enabled !== 1) {
      await store.release(node.id, [row.id]);
      return;
    }
    const cfg = config();
    const secret = hook.secret ? this.deps.vault().open(hook.secret, secretOwner(hook.id)) : undefined;
    const result = await sendSigned(this.deps.net(), { url: hook.url, secret, event: row.event, id: row.event_id }, row.body, {
      timeoutMs: cfg.timeout_ms,
      allowHosts: cfg.allow_hosts,
      signal: this.abort.signal,
    });
    if (this.abort.signal.aborted) return;
    if (result.ok) return store.delivered(row.id, node.id, hook.id, result.status!);
    const attempts = row.attempts + 1;
    const delay = Math.min(cfg.retry_base_ms * 2 ** (attempts - 1), cfg.retry_max_ms);
    const next = attempts < cfg.max_attempts ? Date.now() + delay : undefined;
    const failures = await store.attemptFailed(row.id, node.id, hook.id, result.error ?? 'failed', result.status, next);
    if (next === undefined) log.warn({ webhook: hook.id, delivery: row.id, error: result.error }, 'webhook delivery failed for good');
    if (failures >= cfg.disable_after_failures) {
      const reason = `disabled after ${failures} consecutive failed attempts; last error: ${result.error}`;
      await store.disable(hook.id, reason);
      log.warn({ webhook: hook.id, reason }, 'webhook disabled');
    }
  }
}
