/**
 * A/B experiments. An experiment has arms (variants), each a prompt version, and a traffic split in
 * percent. While running, each session of the agent is assigned an arm by a hash of the experiment and
 * session ids (sticky, nothing stored). Each turn served by an arm is an impression; a win is a turn that
 * finished with a non-empty answer, was not interrupted and had no tool call that failed (docs/operations.md).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { badRequest, conflict, notFound, prepared, requireUuid } from '@talon/module-sdk';
import type { Versions } from './versions.ts';

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

export class Experiments {
  constructor(
    private readonly db: Database,
    private readonly versions: Versions,
  ) {}

  private row(id: string): ExperimentRow {
    const row = prepared(this.db, 'SELECT * FROM prompts_experiments WHERE id = ?').get(requireUuid(id, 'experiment id')) as ExperimentRow | undefined;
    if (!row) throw notFound(`experiment '${id}' not found`);
    return row;
  }

  private variants(experimentId: string): VariantRow[] {
    return prepared(this.db, 'SELECT * FROM prompts_variants WHERE experiment_id = ? ORDER BY position').all(experimentId) as VariantRow[];
  }

  private view(row: ExperimentRow) {
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
      variants: this.variants(row.id).map((v) => ({ id: v.id, name: v.name, prompt_version_id: v.prompt_version_id, description: v.description })),
    };
  }

  get(id: string) {
    return this.view(this.row(id));
  }

  list(agentId: string) {
    const rows = prepared(this.db, 'SELECT * FROM prompts_experiments WHERE agent_id = ? ORDER BY created_at DESC, rowid DESC').all(agentId) as ExperimentRow[];
    return rows.map((r) => this.view(r));
  }

  create(agentId: string, input: NewExperiment) {
    for (const v of input.variants) {
      const version = this.versions.get(v.prompt_version_id);
      if (version.agent_id !== agentId) throw badRequest(`prompt version '${v.prompt_version_id}' belongs to another agent`);
    }
    const n = input.variants.length;
    const split = input.traffic_split ?? input.variants.map((_, i) => Math.floor(100 / n) + (i < 100 % n ? 1 : 0));
    if (split.length !== n) throw badRequest(`traffic_split has ${split.length} entries for ${n} variants`);
    if (split.reduce((a, b) => a + b, 0) !== 100) throw badRequest('traffic_split must add up to 100');
    const id = randomUUID();
    this.db.transaction(() => {
      prepared(
        this.db,
        'INSERT INTO prompts_experiments (id, agent_id, name, status, traffic_split, success_criteria, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        id,
        agentId,
        input.name,
        'draft',
        JSON.stringify(split),
        JSON.stringify({ ...DEFAULT_CRITERIA, ...input.success_criteria }),
        new Date().toISOString(),
      );
      input.variants.forEach((v, i) =>
        prepared(this.db, 'INSERT INTO prompts_variants (id, experiment_id, position, name, prompt_version_id, description) VALUES (?, ?, ?, ?, ?, ?)').run(
          randomUUID(),
          id,
          i,
          v.name,
          v.prompt_version_id,
          v.description ?? null,
        ),
      );
    })();
    return this.get(id);
  }

  private move(id: string, action: keyof typeof MOVES, set: string, ...args: unknown[]): ExperimentRow {
    const row = this.row(id);
    if (!MOVES[action].includes(row.status)) throw conflict(`experiment '${row.name}' is ${row.status}; ${action} needs it ${MOVES[action].join(' or ')}`);
    prepared(this.db, `UPDATE prompts_experiments SET ${set} WHERE id = ?`).run(...args, row.id);
    return row;
  }

  start(id: string) {
    const row = this.row(id);
    const other = prepared(this.db, `SELECT name FROM prompts_experiments WHERE agent_id = ? AND status = 'running' AND id != ?`).get(row.agent_id, row.id) as
      { name: string } | undefined;
    if (other) throw conflict(`experiment '${other.name}' is already running for this agent; pause or complete it first`);
    this.move(id, 'start', `status = 'running', started_at = coalesce(started_at, ?)`, new Date().toISOString());
    return this.get(id);
  }

  pause(id: string) {
    this.move(id, 'pause', `status = 'paused'`);
    return this.get(id);
  }

  /** Records the winner (given, or the arm with the best win rate) and activates its prompt version. */
  complete(id: string, winnerId?: string) {
    const variants = this.variants(this.row(id).id);
    const winner = winnerId ? variants.find((v) => v.id === winnerId) : best(variants);
    if (winnerId && !winner) throw badRequest(`variant '${winnerId}' is not an arm of this experiment`);
    this.db.transaction(() => {
      this.move(id, 'complete', `status = 'completed', ended_at = ?, winner_variant_id = ?`, new Date().toISOString(), winner?.id ?? null);
      if (winner) this.versions.activate(winner.prompt_version_id);
    })();
    return this.get(id);
  }

  metrics(id: string) {
    const row = this.row(id);
    const variants = this.variants(row.id).map((v) => ({
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

  /** The arm serving this session of the agent, when an experiment is running. */
  armFor(agentId: string, sessionId: string): { experimentId: string; variantId: string; prompt: string } | undefined {
    const row = prepared(this.db, `SELECT * FROM prompts_experiments WHERE agent_id = ? AND status = 'running'`).get(agentId) as ExperimentRow | undefined;
    if (!row) return undefined;
    const split = JSON.parse(row.traffic_split) as number[];
    const bucket = createHash('sha256').update(`${row.id}:${sessionId}`).digest().readUInt32BE(0) % 100;
    let edge = 0;
    const index = split.findIndex((share) => bucket < (edge += share));
    const variant = this.variants(row.id)[index];
    const prompt = variant && this.versions.promptOf(variant.prompt_version_id);
    return prompt === undefined ? undefined : { experimentId: row.id, variantId: variant.id, prompt };
  }

  impression(variantId: string): void {
    prepared(this.db, 'UPDATE prompts_variants SET impressions = impressions + 1 WHERE id = ?').run(variantId);
  }

  outcome(variantId: string, o: { win: boolean; costUsd: number; latencyMs: number }): void {
    prepared(
      this.db,
      'UPDATE prompts_variants SET wins = wins + ?, total_cost_usd = total_cost_usd + ?, total_latency_ms = total_latency_ms + ?, measured = measured + 1 WHERE id = ?',
    ).run(o.win ? 1 : 0, o.costUsd, o.latencyMs, variantId);
  }
}

/** The arm with the best win rate among those that served at least one turn (ties: fewer failures, then order). */
function best(variants: VariantRow[]): VariantRow | undefined {
  const served = variants.filter((v) => v.impressions > 0);
  return served.sort(
    (a, b) => b.wins / b.impressions - a.wins / a.impressions || a.impressions - a.wins - (b.impressions - b.wins) || a.position - b.position,
  )[0];
}
