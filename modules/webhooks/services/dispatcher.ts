/**
 * Drains the delivery journal: due deliveries are sent a few at a time; a failed attempt is retried with
 * exponential backoff until max_attempts; a webhook that keeps failing is disabled with the reason (its queued
 * deliveries wait for it to be enabled again). Rows change only after an attempt ends, so a restart re-sends what
 * was in flight: delivery is at least once (receivers de-duplicate by X-Webhook-Id).
 */
import type { Logger } from 'pino';
import type { SecretVault } from '@talon/catalog';
import type { SafeNet } from '@talon/tools';
import type { WebhooksConfig } from '../config.ts';
import { sendSigned } from './sender.ts';
import type { DeliveryRow, HookStore } from './store.ts';

export interface DispatcherDeps {
  store: HookStore;
  net: () => SafeNet;
  vault: () => SecretVault;
  config: () => WebhooksConfig;
  log: Logger;
  setTimeout: (fn: () => unknown, ms: number) => NodeJS.Timeout;
}

export const secretOwner = (hookId: string) => `webhooks:secret:${hookId}`;

export class Dispatcher {
  private readonly inflight = new Map<number, Promise<void>>();
  private readonly abort = new AbortController();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Starts what is due now and arms a timer for the next due retry. */
  pump(): void {
    if (this.stopped) return;
    const { store, config } = this.deps;
    const free = config().concurrency - this.inflight.size;
    if (free > 0) {
      for (const row of store.due(Date.now(), free, new Set(this.inflight.keys()))) {
        const run = this.attempt(row).finally(() => {
          this.inflight.delete(row.id);
          this.pump();
        });
        this.inflight.set(row.id, run);
      }
    }
    this.arm(store.nextDue());
  }

  /** Lets attempts in flight end (bounded); what does not finish stays pending for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const settled = Promise.allSettled([...this.inflight.values()]);
    const bound = new Promise((r) => setTimeout(r, 2000).unref());
    await Promise.race([settled, bound]);
    this.abort.abort(new Error('the service is stopping'));
  }

  private arm(at: number | undefined): void {
    if (at === undefined || this.inflight.size >= this.deps.config().concurrency) return;
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
    const { store, config, log } = this.deps;
    const hook = store.get(row.hook_id);
    if (!hook || hook.enabled !== 1) return;
    const cfg = config();
    const secret = hook.secret ? this.deps.vault().open(hook.secret, secretOwner(hook.id)) : undefined;
    const result = await sendSigned(this.deps.net(), { url: hook.url, secret, event: row.event, id: row.event_id }, row.body, {
      timeoutMs: cfg.timeout_ms,
      allowHosts: cfg.allow_hosts,
      signal: this.abort.signal,
    });
    if (this.abort.signal.aborted) return;
    if (result.ok) return store.delivered(row.id, hook.id, result.status!);
    const attempts = row.attempts + 1;
    const delay = Math.min(cfg.retry_base_ms * 2 ** (attempts - 1), cfg.retry_max_ms);
    const next = attempts < cfg.max_attempts ? Date.now() + delay : undefined;
    const failures = store.attemptFailed(row.id, hook.id, result.error ?? 'failed', result.status, next);
    if (next === undefined) log.warn({ webhook: hook.id, delivery: row.id, error: result.error }, 'webhook delivery failed for good');
    if (failures >= cfg.disable_after_failures) {
      const reason = `disabled after ${failures} consecutive failed attempts; last error: ${result.error}`;
      store.disable(hook.id, reason);
      log.warn({ webhook: hook.id, reason }, 'webhook disabled');
    }
  }
}
