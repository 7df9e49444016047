/**
 * Finished turns in agents_turns: the source of GET …/traces, …/metrics
 * and …/logs. A trace is written just after the turn has answered (one
 * commit less on its way); reads write what is queued first.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { prepared, WriteBehind } from '@talon/module-sdk';

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
  /** 'ok', 'interrupted', 'stopped' or 'error'. */
  outcome: string;
  error: string | null;
  steps: TurnStep[];
}

interface Row extends Omit<TurnTrace, 'turn_id' | 'steps'> {
  id: string;
  steps: string;
}

export class TraceStore {
  private readonly queue: WriteBehind<TurnTrace>;

  constructor(
    private readonly db: Database,
    log: Logger,
  ) {
    this.queue = new WriteBehind(
      db,
      (trace) => this.insert(trace),
      (err, rows) => log.error({ err, turns: rows.length }, 'turn traces could not be written'),
    );
  }

  record(trace: TurnTrace): void {
    this.queue.push(trace);
  }

  /** Writes the traces still queued (module stop; reads do it themselves). */
  flush(): void {
    this.queue.flush();
  }

  private insert(trace: TurnTrace): void {
    prepared(
      this.db,
      `INSERT INTO agents_turns (id, agent_id, session_id, origin, started_at, duration_ms, iterations, input_tokens, output_tokens, cost_usd, outcome, error, steps)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
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
    );
  }

  recent(agentId: string, limit: number, offset = 0): TurnTrace[] {
    this.queue.flush();
    const rows = prepared(this.db, 'SELECT * FROM agents_turns WHERE agent_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?').all(
      agentId,
      limit,
      offset,
    ) as Row[];
    return rows.map(({ id, steps, ...rest }) => ({ turn_id: id, ...rest, steps: JSON.parse(steps) as TurnStep[] }));
  }

  count(agentId: string): number {
    this.queue.flush();
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM agents_turns WHERE agent_id = ?').get(agentId) as { n: number }).n;
  }

  metrics(agentId: string) {
    this.queue.flush();
    const row = prepared(
      this.db,
      `SELECT COUNT(*) AS turns, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
         COALESCE(SUM(cost_usd), 0) AS cost_usd, COALESCE(AVG(duration_ms), 0) AS avg_ms, COALESCE(MAX(duration_ms), 0) AS max_ms,
         COALESCE(SUM(outcome = 'error'), 0) AS errors, COALESCE(SUM(iterations), 0) AS iterations
         FROM agents_turns WHERE agent_id = ?`,
    ).get(agentId) as {
      turns: number;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      avg_ms: number;
      max_ms: number;
      errors: number;
      iterations: number;
    };
    const toolCalls: Record<string, number> = {};
    let toolErrors = 0;
    let toolTotal = 0;
    for (const { steps } of prepared(this.db, 'SELECT steps FROM agents_turns WHERE agent_id = ?').all(agentId) as Array<{ steps: string }>) {
      for (const step of JSON.parse(steps) as TurnStep[]) {
        for (const t of step.tools) {
          toolCalls[t.tool] = (toolCalls[t.tool] ?? 0) + 1;
          toolTotal++;
          if (t.is_error) toolErrors++;
        }
      }
    }
    return {
      agent_id: agentId,
      turns: row.turns,
      iterations: row.iterations,
      token_usage: { input_tokens: row.input_tokens, output_tokens: row.output_tokens, total_tokens: row.input_tokens + row.output_tokens },
      cost_usd: row.cost_usd,
      avg_response_time_ms: Math.round(row.avg_ms),
      max_response_time_ms: row.max_ms,
      errors: row.errors,
      error_rate: row.turns ? row.errors / row.turns : 0,
      tool_calls: toolCalls,
      tool_error_rate: toolTotal ? toolErrors / toolTotal : 0,
    };
  }

  deleteAgent(agentId: string): void {
    this.queue.flush();
    prepared(this.db, 'DELETE FROM agents_turns WHERE agent_id = ?').run(agentId);
  }
}
