/**
 * What every model call asks: the agent's active prompt and the arms of its running experiment. Kept in memory
 * (loaded at start), so the beforeModelCall tap reads no table. A write that changes either notes the agent on the
 * change feed in its transaction and reloads the agent here after its commit; the other processes reload it when
 * they read the note.
 */
import type { ChangeFeed, Queries, Store } from '@talon/module-sdk';

/** The change-feed topic; key = the agent id. */
export const AGENT_TOPIC = 'agent';

export interface Arm {
  variantId: string;
  /** The arm's prompt version's text; null if the version is gone. */
  prompt: string | null;
}

export interface RunningExperiment {
  id: string;
  /** Percent per arm, in arm order. */
  split: number[];
  arms: Arm[];
}

interface ArmRow {
  id: string;
  agent_id: string;
  traffic_split: string;
  variant_id: string;
  system_prompt: string | null;
}

const ACTIVE = 'SELECT agent_id, system_prompt FROM prompts_versions WHERE is_active = 1';
const RUNNING = `SELECT e.id, e.agent_id, e.traffic_split, v.id AS variant_id, p.system_prompt FROM prompts_experiments e
  JOIN prompts_variants v ON v.experiment_id = e.id LEFT JOIN prompts_versions p ON p.id = v.prompt_version_id
  WHERE e.status = 'running'`;

export class PromptCache {
  private active = new Map<string, string>();
  private running = new Map<string, RunningExperiment>();

  constructor(
    private readonly store: Store,
    private readonly feed: Pick<ChangeFeed, 'note'>,
  ) {}

  /** Every agent's (the module's start()). */
  async load(): Promise<void> {
    const active = await this.store.many<{ agent_id: string; system_prompt: string }>(ACTIVE);
    const arms = await this.store.many<ArmRow>(`${RUNNING} ORDER BY e.id, v.position`);
    this.active = new Map(active.map((r) => [r.agent_id, r.system_prompt]));
    this.running = group(arms);
  }

  /** One agent's, after a write here or a note from another process. */
  async reload(agentId: string): Promise<void> {
    const active = await this.store.one<{ system_prompt: string }>(`${ACTIVE} AND agent_id = ?`, [agentId]);
    const arms = await this.store.many<ArmRow>(`${RUNNING} AND e.agent_id = ? ORDER BY e.id, v.position`, [agentId]);
    if (active) this.active.set(agentId, active.system_prompt);
    else this.active.delete(agentId);
    const experiment = group(arms).get(agentId);
    if (experiment) this.running.set(agentId, experiment);
    else this.running.delete(agentId);
  }

  /** Notes, inside the writing transaction, that the agent's prompts changed (call reload after the commit). */
  note(agentId: string, t: Queries): Promise<void> {
    return this.feed.note(AGENT_TOPIC, agentId, t);
  }

  activePrompt(agentId: string): string | undefined {
    return this.active.get(agentId);
  }

  runningFor(agentId: string): RunningExperiment | undefined {
    return this.running.get(agentId);
  }
}

/** Rows of running experiments' arms (in arm order) → per agent. */
function group(rows: readonly ArmRow[]): Map<string, RunningExperiment> {
  const out = new Map<string, RunningExperiment>();
  for (const r of rows) {
    let experiment = out.get(r.agent_id);
    if (!experiment) out.set(r.agent_id, (experiment = { id: r.id, split: JSON.parse(r.traffic_split) as number[], arms: [] }));
    experiment.arms.push({ variantId: r.variant_id, prompt: r.system_prompt });
  }
  return out;
}
