/**
 * A/B experiments. An experiment has arms (variants), each a prompt version, and a traffic split in
 * percent. While running, each session of the agent is assigned an arm by a hash of the experiment and
 * session ids (sticky, nothing stored). Each turn served by an arm is an impression; a win is a turn that
 * finished with a non-empty answer, was not interrupted and had no tool call that failed (docs/operations.md).
 */
import { createHash, randomUUID } from 'node:crypto';
import { badRequest, conflict, notFound, requireUuid, WriteBehind, type Queries, type SqlValue, type Store } from '@talon/module-sdk';
import type { Versions } from './versions.ts';
import type { PromptCache } from './cache.ts';

type Status = 'draft' | 'running' | 'paused' | 'completed';

interface ExperimentRow {
  id: string;
  agent_id: string;
  name: string;
  status: Status;
  traffic_split: string;
  success_criteria: string;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  winner_variant_id: string | null;
}

interface VariantRow {
  id: string;
  experiment_id: string;
  position: number;
  name: string;
  prompt_version_id: string;
  description: string | null;
  impressions: number;
  wins: number;
  total_cost_usd: number;
  total_latency_ms: number;
  measured: number;
}

export interface NewExperiment {
  name: string;
  variants: Array<{ name: string; prompt_version_id: string; description?: string }>;
  traffic_split?: number[];
  success_criteria?: Record<string, unknown>;
}

/** Which states each action may start from. */
const MOVES: Record<'start' | 'pause' | 'complete', Status[]> = { start: ['draft', 'paused'], pause: ['running'], complete: ['draft', 'running', 'paused'] };

export const DEFAULT_CRITERIA = { require_non_empty: true, require_no_tool_errors: true, require_not_interrupted: true };

/** A turn's effect on an arm's counters, written behind the turn (the model-call tap cannot wait for a commit). */
export type Measure = { variantId: string; impression: true } | { variantId: string; impression: false; win: boolean; costUsd: number; latencyMs: number };

export class Experiments {
  private readonly measures: WriteBehind<Measure>;

  constructor(
    private readonly store: Store,
    private readonly versions: Versions,
    private readonly cache: PromptCache,
    onError: (err: unknown, rows: readonly Measure[]) => void,
  ) {
    this.measures = new WriteBehind(store, writeMeasure, onError);
  }

  private async row(id: string, q: Queries = this.store): Promise<ExperimentRow> {
    const row = await q.one<ExperimentRow>('SELECT * FROM prompts_experiments WHERE id = ?', [requireUuid(id, 'experiment id')]);
    if (!row) throw notFound(`experiment '${id}' not found`);
    return row;
  }

  private variants(experimentId: string, q: Queries = this.store): Promise<VariantRow[]> {
    return q.many<VariantRow>('SELECT * FROM prompts_variants WHERE experiment_id = ? ORDER BY position', [experimentId]);
  }

  private async view(row: ExperimentRow, q: Queries = this.store) {
    return {
      id: row.id,
      agent_id: row.agent_id,
      name: row.name,
      status: row.status,
      traffic_split: JSON.parse(row.traffic_split) as number[],
      success_criteria: JSON.parse(row.success_criteria) as Record<string, unknown>,
      created_at: row.created_at,
      started_at: row.started_at,
      ended_at: row.ended_at,
      winner_variant_id: row.winner_variant_id,
      variants: (await this.variants(row.id, q)).map((v) => ({ id: v.id, name: v.name, prompt_version_id: v.prompt_version_id, description: v.description })),
    };
  }

  async get(id: string, q: Queries = this.store) {
    return this.view(await this.row(id, q), q);
  }

  async list(agentId: string) {
    // Newest first; among experiments created in the same millisecond the later insert first (SQLite's rowid;
    // PostgreSQL keeps no insertion order, so there the id breaks the tie).
    const order = this.store.pick({ sqlite: 'created_at DESC, rowid DESC', postgres: 'created_at DESC, id DESC' });
    const rows = await this.store.many<ExperimentRow>(`SELECT * FROM prompts_experiments WHERE agent_id = ? ORDER BY ${order}`, [agentId]);
    const views = [];
    for (const r of rows) views.push(await this.view(r));
    return views;
  }

  async create(agentId: string, input: NewExperiment) {
    for (const v of input.variants) {
      const version = await this.versions.get(v.prompt_version_id);
      if (version.agent_id !== agentId) throw badRequest(`prompt version '${v.prompt_version_id}' belongs to another agent`);
    }
    const n = input.variants.length;
    const split = input.traffic_split ?? input.variants.map((_, i) => Math.floor(100 / n) + (i < 100 % n ? 1 : 0));
    if (split.length !== n) throw badRequest(`traffic_split has ${split.length} entries for ${n} variants`);
    if (split.reduce((a, b) => a + b, 0) !== 100) throw badRequest('traffic_split must add up to 100');
    const id = randomUUID();
    return this.store.tx(async (t) => {
      await t.run('INSERT INTO prompts_experiments (id, agent_id, name, status, traffic_split, success_criteria, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        id,
        agentId,
        input.name,
        'draft',
        JSON.stringify(split),
        JSON.stringify({ ...DEFAULT_CRITERIA, ...input.success_criteria }),
        new Date().toISOString(),
      ]);
      for (const [i, v] of input.variants.entries())
        await t.run('INSERT INTO prompts_variants (id, experiment_id, position, name, prompt_version_id, description) VALUES (?, ?, ?, ?, ?, ?)', [
          randomUUID(),
          id,
          i,
          v.name,
          v.prompt_version_id,
          v.description ?? null,
        ]);
      return this.get(id, t);
    });
  }

  /** Moves the experiment to a new state inside `t` (refused from the wrong one) and notes its agent for the caches. */
  private async move(t: Queries, id: string, action: keyof typeof MOVES, set: string, ...args: SqlValue[]): Promise<ExperimentRow> {
    const row = await this.row(id, t);
    if (!MOVES[action].includes(row.status)) throw conflict(`experiment '${row.name}' is ${row.status}; ${action} needs it ${MOVES[action].join(' or ')}`);
    await t.run(`UPDATE prompts_experiments SET ${set} WHERE id = ?`, [...args, row.id]);
    await this.cache.note(row.agent_id, t);
    return row;
  }

  /** A state change in one transaction, then the agent's cached prompts reloaded; answers the experiment. */
  private async change(id: string, work: (t: Queries) => Promise<ExperimentRow>) {
    const { row, view } = await this.store.tx(async (t) => {
      const moved = await work(t);
      return { row: moved, view: await this.get(id, t) };
    });
    await this.cache.reload(row.agent_id);
    return view;
  }

  start(id: string) {
    return this.change(id, async (t) => {
      const row = await this.row(id, t);
      const other = await t.one<{ name: string }>(`SELECT name FROM prompts_experiments WHERE agent_id = ? AND status = 'running' AND id != ?`, [
        row.agent_id,
        row.id,
      ]);
      if (other) throw conflict(`experiment '${other.name}' is already running for this agent; pause or complete it first`);
      return this.move(t, id, 'start', `status = 'running', started_at = coalesce(started_at, ?)`, new Date().toISOString());
    });
  }

  pause(id: string) {
    return this.change(id, (t) => this.move(t, id, 'pause', `status = 'paused'`));
  }

  /** Records the winner (given, or the arm with the best win rate) and activates its prompt version. */
  async complete(id: string, winnerId?: string) {
    await this.measures.flush();
    return this.change(id, async (t) => {
      const variants = await this.variants((await this.row(id, t)).id, t);
      const winner = winnerId ? variants.find((v) => v.id === winnerId) : best(variants);
      if (winnerId && !winner) throw badRequest(`variant '${winnerId}' is not an arm of this experiment`);
      const row = await this.move(t, id, 'complete', `status = 'completed', ended_at = ?, winner_variant_id = ?`, new Date().toISOString(), winner?.id ?? null);
      if (winner) await this.versions.activateIn(t, winner.prompt_version_id);
      return row;
    });
  }

  async metrics(id: string) {
    // The counters of turns that just ended here may still be queued.
    await this.measures.flush();
    const row = await this.row(id);
    const variants = (await this.variants(row.id)).map((v) => ({
      variant_id: v.id,
      variant_name: v.name,
      prompt_version_id: v.prompt_version_id,
      impressions: v.impressions,
      wins: v.wins,
      failures: v.impressions - v.wins,
      win_rate: v.impressions ? v.wins / v.impressions : 0,
      total_cost_usd: v.total_cost_usd,
      avg_cost_usd: v.measured ? v.total_cost_usd / v.measured : 0,
      avg_latency_ms: v.measured ? Math.round(v.total_latency_ms / v.measured) : 0,
    }));
    return { experiment_id: row.id, status: row.status, winner_variant_id: row.winner_variant_id, variants };
  }

  /** The arm serving this session of the agent, when an experiment is running (from the cache: every model call asks). */
  armFor(agentId: string, sessionId: string): { experimentId: string; variantId: string; prompt: string } | undefined {
    const running = this.cache.runningFor(agentId);
    if (!running) return undefined;
    const bucket = createHash('sha256').update(`${running.id}:${sessionId}`).digest().readUInt32BE(0) % 100;
    let edge = 0;
    const index = running.split.findIndex((share) => bucket < (edge += share));
    const arm = running.arms[index];
    return arm?.prompt == null ? undefined : { experimentId: running.id, variantId: arm.variantId, prompt: arm.prompt };
  }

  impression(variantId: string): void {
    this.measures.push({ variantId, impression: true });
  }

  outcome(variantId: string, o: { win: boolean; costUsd: number; latencyMs: number }): void {
    this.measures.push({ variantId, impression: false, ...o });
  }

  /** Writes what is queued (the module's stop). */
  flush(): Promise<void> {
    return this.measures.flush();
  }
}

function writeMeasure(t: Queries, m: Measure): Promise<unknown> {
  if (m.impression) return t.run('UPDATE prompts_variants SET impressions = impressions + 1 WHERE id = ?', [m.variantId]);
  return t.run(
    'UPDATE prompts_variants SET wins = wins + ?, total_cost_usd = total_cost_usd + ?, total_latency_ms = total_latency_ms + ?, measured = measured + 1 WHERE id = ?',
    [m.win ? 1 : 0, m.costUsd, m.latencyMs, m.variantId],
  );
}

/** The arm with the best win rate among those that served at least one turn (ties: fewer failures, then order). */
function best(variants: VariantRow[]): VariantRow | undefined {
  const served = variants.filter((v) => v.impressions > 0);
  return served.sort(
    (a, b) => b.wins / b.impressions - a.wins / a.impressions || a.impressions - a.wins - (b.impressions - b.wins) || a.position - b.position,
  )[0];
}
