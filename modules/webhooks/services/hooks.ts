/** Creating, changing and listing webhooks (both kinds), and turning bus events into journal rows. */
import { randomUUID } from 'node:crypto';
import { badRequest, HttpError, notFound, type TalonEvent } from '@talon/module-sdk';
import type { SecretVault } from '@talon/secrets';
import type { NetFetch } from '@talon/net';
import type { WebhooksConfig } from '../config.ts';
import { secretOwner } from './dispatcher.ts';
import { eventName, nameOf, subscribed, type EventName } from './events.ts';
import { sendSigned } from './sender.ts';
import type { HookKind, HookRow, HookStore } from './store.ts';

export interface HookInput {
  name?: string;
  url?: string;
  events?: string[];
  secret?: string;
  enabled?: boolean;
}

export interface HooksDeps {
  store: HookStore;
  net: () => NetFetch;
  vault: () => SecretVault;
  config: () => WebhooksConfig;
  /** Called after new journal rows were written. */
  kick: () => void;
}

function canonicalEvents(events: readonly string[]): EventName[] {
  const out = events.map((e) => {
    const name = eventName(e);
    if (!name) throw badRequest(`unknown event '${e}' (known: agent_spawned, message_completed, workflow_failed, ... see docs/webhooks.md)`);
    return name;
  });
  return [...new Set(out)];
}

export class Hooks {
  constructor(private readonly deps: HooksDeps) {}

  /** The record as the API shows it: never the secret, only whether there is one. */
  async view(row: HookRow) {
    const events = JSON.parse(row.events) as string[];
    const base = {
      id: row.id,
      url: row.url,
      enabled: row.enabled === 1,
      has_secret: row.secret !== null,
      disabled_reason: row.disabled_reason,
      consecutive_failures: row.consecutive_failures,
      deliveries: await this.deps.store.counts(row.id),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
    return row.kind === 'event' ? { ...base, event_type: events[0] } : { ...base, name: row.name, events };
  }

  async get(id: string, kind: HookKind): Promise<HookRow> {
    const row = await this.deps.store.get(id, kind);
    if (!row) throw notFound(`${kind === 'event' ? 'event webhook' : 'webhook'} '${id}' not found`);
    return row;
  }

  async create(kind: HookKind, input: Required<Pick<HookInput, 'url' | 'events'>> & HookInput): Promise<HookRow> {
    await this.checkUrl(input.url);
    const now = new Date().toISOString();
    const id = randomUUID();
    const row: HookRow = {
      id,
      kind,
      name: input.name ?? '',
      url: input.url,
      events: JSON.stringify(canonicalEvents(input.events)),
      secret: input.secret ? this.deps.vault().seal(input.secret, secretOwner(id)) : null,
      enabled: input.enabled === false ? 0 : 1,
      disabled_reason: null,
      consecutive_failures: 0,
      created_at: now,
      updated_at: now,
    };
    await this.deps.store.insert(row);
    return row;
  }

  /** Partial update; enabling clears the failure count and the reason, and resumes queued deliveries. */
  async update(id: string, kind: HookKind, input: HookInput): Promise<HookRow> {
    const row = { ...(await this.get(id, kind)) };
    if (input.url !== undefined) await this.checkUrl(input.url);
    if (input.url !== undefined) row.url = input.url;
    if (input.name !== undefined) row.name = input.name;
    if (input.events !== undefined) row.events = JSON.stringify(canonicalEvents(input.events));
    if (input.secret !== undefined) row.secret = input.secret ? this.deps.vault().seal(input.secret, secretOwner(id)) : null;
    if (input.enabled !== undefined) {
      row.enabled = input.enabled ? 1 : 0;
      if (input.enabled) Object.assign(row, { disabled_reason: null, consecutive_failures: 0 });
    }
    row.updated_at = new Date().toISOString();
    await this.deps.store.update(row);
    if (row.enabled) this.deps.kick();
    return row;
  }

  async delete(id: string, kind: HookKind): Promise<void> {
    await this.get(id, kind);
    await this.deps.store.delete(id);
  }

  /** Sends one signed test payload now (no retry) and reports what the target answered. */
  async test(id: string): Promise<{ status: 'sent'; response_status: number; webhook_id: string }> {
    const row = await this.get(id, 'outbound');
    const body = JSON.stringify({
      id: randomUUID(),
      event: 'test',
      timestamp: new Date().toISOString(),
      data: { webhook_id: id, message: 'Test delivery from Talon' },
    });
    const cfg = this.deps.config();
    const secret = row.secret ? this.deps.vault().open(row.secret, secretOwner(id)) : undefined;
    const result = await sendSigned(this.deps.net(), { url: row.url, secret, event: 'test', id: randomUUID() }, body, {
      timeoutMs: cfg.timeout_ms,
      allowHosts: cfg.allow_hosts,
    });
    if (result.status === null) throw new HttpError(502, `test delivery failed: ${result.error}`, { extra: { status: 'error', webhook_id: id } });
    return { status: 'sent', response_status: result.status, webhook_id: id };
  }

  /** Journals one row per enabled webhook subscribed to the event (the envelope is fixed now, signed when sent). */
  async onEvent(event: TalonEvent): Promise<void> {
    const name = nameOf(event);
    const targets = (await this.deps.store.enabled()).filter((s) => subscribed(s.events, name)).map((s) => s.hook);
    if (!targets.length) return;
    const body = JSON.stringify({ id: event.id, event: name, timestamp: event.at, data: event.data });
    await this.deps.store.enqueue(targets.map((h) => ({ hook_id: h.id, event_id: event.id, event: name, body })));
    this.deps.kick();
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await this.deps.net().check(url, { allowHosts: this.deps.config().allow_hosts });
    } catch (err) {
      throw badRequest(`url refused: ${(err as Error).message}`);
    }
  }
}
