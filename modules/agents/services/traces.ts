/**
 * Finished turns in agents_turns: the source of GET …/traces, …/metrics
 * and …/logs. A trace is written just after the turn has answered (one
 * commit less on its way); reads write what is queued first.
 */
import type { Logger } from 'pino';
import { WriteBehind, type Queries, type Store } from '@talon/module-sdk';

export interface ToolStep {
  tool: string;
  ms: number;
  is_error: boolean;
  /** 'ran', 'warned' (ran with a loop-guard warning), 'blocked' or 'unknown'. */
  verdict: string;
}

export interface TurnStep {
  iteration: number;
  llm_ms: number;
  input_tokens: number;
  output_tokens: number;
  tools: ToolStep[];
}

export interface TurnTrace {
  turn_id: string;
  agent_id: string;
  session_id: string;
  origin: string;
  started_at: string;
  duration_ms: number;
  iterations: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** 'ok', 'interrupted' (also a turn whose process died: error says so), 'stopped' or 'error'. */
  outcome: string;
  error: string | null;
  steps: TurnStep[];
}

interface Row extends Omit<TurnTrace, 'turn_id' | 'steps'> {
  id: string;
  steps: string;
}

const INSERT = `INSERT INTO agents_turns (id, agent_id, session_id, origin, started_at, duration_ms, iterations, input_tokens, output_tokens, cost_usd, outcome, error, steps)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;

export class TraceStore {
  private readonly queue: WriteBehind<TurnTrace>;

  constructor(
    private readonly store: Store,
    log: Logger,
  ) {
    this.queue = new WriteBehind(
      store,
      (t, trace) => this.insert(t, trace),
      (err, rows) => log.error({ err, turns: rows.length }, 'turn traces could not be written'),
    );
  }

  record(trace: TurnTrace): void {
    this.queue.push(trace);
  }

  /** Writes the traces still queued (module stop; reads do it themselves). */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  /**
   * Writes a trace now, in the caller's transaction. The first record of a turn wins: a turn recorded as lost by the
   * process that took over from its dead owner stays so if the owner turns out to finish it after all.
   */
  async insert(t: Queries, trace: TurnTrace): Promise<void> {
    await t.run(INSERT, [
      trace.turn_id,
      trace.agent_id,
      trace.session_id,
      trace.origin,
      trace.started_at,
      trace.duration_ms,
      trace.iterations,
      trace.input_tokens,
      trace.output_tokens,
      trace.cost_usd,
      trace.outcome,
      trace.error,
      JSON.stringify(trace.steps),
    ]);
  }

  async recent(agentId: string, limit: number, offset = 0): Promise<TurnTrace[]> {
    await this.flush();
    // Newest first; turns that started in the same millisecond in the order they were written (SQLite's rowid).
    const order = this.store.pick({ sqlite: 'started_at DESC, rowid DESC', postgres: 'started_at DESC, id DESC' });
    const rows = await this.store.many<Row>(`SELECT * FROM agents_turns WHERE agent_id = ? ORDER BY ${order} LIMIT ? OFFSET ?`, [agentId, limit, offset]);
    return rows.map(({ id, steps, ...rest }) => ({ turn_id: id, ...rest, steps: JSON.parse(steps) as TurnStep[] }));
  }

  /** The latest turns of every agent with this outcome, newest first (the dashboard's home lists the failed ones). */
  async recentByOutcome(outcome: string, limit: number, offset = 0): Promise<TurnTrace[]> {
    await this.flush();
    const order = this.store.pick({ sqlite: 'started_at DESC, rowid DESC', postgres: 'started_at DESC, id DESC' });
    const rows = await this.store.many<Row>(`SELECT * FROM agents_turns WHERE outcome = ? ORDER BY ${order} LIMIT ? OFFSET ?`, [outcome, limit, offset]);
    return rows.map(({ id, steps, ...rest }) => ({ turn_id: id, ...rest, steps: JSON.parse(steps) as TurnStep[] }));
  }

  async one(turnId: string): Promise<TurnTrace | undefined> {
    await this.flush();
    const row = await this.store.one<Row>('SELECT * FROM agents_turns WHERE id = ?', [turnId]);
    if (!row) return undefined;
    const { id, steps, ...rest } = row;
    return { turn_id: id, ...rest, steps: JSON.parse(steps) as TurnStep[] };
  }

  async count(agentId: string): Promise<number> {
    await this.flush();
    return (await this.store.one<{ n: number }>('SELECT COUNT(*) AS n FROM agents_turns WHERE agent_id = ?', [agentId]))?.n ?? 0;
  }

  async metrics(agentId: string) {
    await this.flush();
    const row = (await this.store.one<{
      turns: number;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      avg_ms: number;
      max_ms: number;
      errors: number;
      iterations: number;
    }>(
      `SELECT COUNT(*) AS turns, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
         COALESCE(SUM(cost_usd), 0) AS cost_usd, COALESCE(AVG(duration_ms), 0) AS avg_ms, COALESCE(MAX(duration_ms), 0) AS max_ms,
         COALESCE(SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END), 0) AS errors, COALESCE(SUM(iterations), 0) AS iterations
         FROM agents_turns WHERE agent_id = ?`,
      [agentId],
    ))!;
    const toolCalls: Record<string, number> = {};
    let toolErrors = 0;
    let toolTotal = 0;
    for (const { steps } of await this.store.many<{ steps: string }>('SELECT steps FROM agents_turns WHERE agent_id = ?', [agentId])) {
      for (const step of JSON.parse(steps) as TurnStep[]) {
        for (const t of step.tools) {
          toolCalls[t.tool] = (toolCalls[t.tool] ?? 0) + 1;
          toolTotal++;
          if (t.is_error) toolErrors++;
        }
      }
    }
    // PostgreSQL hands back sums and averages of integers as numeric text.
    const turns = Number(row.turns);
    const errors = Number(row.errors);
    const input = Number(row.input_tokens);
    const output = Number(row.output_tokens);
    return {
      agent_id: agentId,
      turns,
      iterations: Number(row.iterations),
      token_usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      cost_usd: Number(row.cost_usd),
      avg_response_time_ms: Math.round(Number(row.avg_ms)),
      max_response_time_ms: Number(row.max_ms),
      errors,
      error_rate: turns ? errors / turns : 0,
      tool_calls: toolCalls,
      tool_error_rate: toolTotal ? toolErrors / toolTotal : 0,
    };
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.flush();
    await this.store.run('DELETE FROM agents_turns WHERE agent_id = ?', [agentId]);
  }
}
