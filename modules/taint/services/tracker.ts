/**
 * Labels per turn and the sink checks. A turn is labelled by its origin (anything but the local user: a channel, a
 * webhook, a schedule, another agent — the agents module says which in TurnInfo.fromLocalUser) and
 * by the results of untrusted tools; credential values seen in any tool result are remembered for the turn. Sinks
 * are checked in agentHooks.authorizeToolCall: block answers a refusal the model reads, warn lets the call run
 * and puts a notice in front of its result, log only logs. Labels are a pattern-and-flow heuristic, not a proof.
 */
import type { Logger } from 'pino';
import type { ToolCallInfo, ToolOutput, TurnInfo } from '@talon/agents';
import type { EventChannel } from '@talon/module-sdk';
import type { taintEvents } from '@talon/taint';
import type { SinkAction, TaintConfig } from '../config.ts';
import { credentialValues, hostsIn, injectionHits, ownSecrets, piiHits, secretHits, type Hit } from './detect.ts';

export type Label = 'ExternalNetwork' | 'UntrustedAgent' | 'UserInput';

interface TurnTaint {
  labels: Set<Label>;
  /** Hosts the (trusted) user named: web_fetch to them is not to a new host. */
  namedHosts: Set<string>;
  /** Credential values seen in this turn's tool results. */
  seen: string[];
}

const MAX_TURNS = 1000;
/** Origins where another agent wrote the message (the rest of the untrusted origins are outside users or events). */
const AGENT_ORIGINS = new Set(['agent_send', 'a2a', 'peer', 'comms']);
const matches = (patterns: readonly string[], tool: string) => patterns.some((p) => (p.endsWith('*') ? tool.startsWith(p.slice(0, -1)) : p === tool));
const stringsOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? ''));

export class TaintTracker {
  private readonly turns = new Map<string, TurnTaint>();
  private readonly warnings = new Map<string, string>();

  constructor(
    private readonly config: () => TaintConfig,
    private readonly events: EventChannel<typeof taintEvents>,
    private readonly log: Logger,
  ) {}

  labels(turnId: string): Label[] {
    return [...(this.turns.get(turnId)?.labels ?? [])];
  }

  beginTurn(turn: TurnInfo): void {
    const state = this.turn(turn.turnId);
    const origin = turn.origin ?? '';
    if (!turn.fromLocalUser || matches(this.config().untrusted_origins, origin)) state.labels.add(AGENT_ORIGINS.has(origin) ? 'UntrustedAgent' : 'UserInput');
    else for (const host of hostsIn(turn.message)) state.namedHosts.add(host);
  }

  endTurn(turnId: string): void {
    this.turns.delete(turnId);
  }

  result(output: ToolOutput, call: ToolCallInfo): ToolOutput {
    const state = this.turn(call.turnId);
    if (matches(this.config().untrusted_tools, call.tool)) state.labels.add(call.tool === 'agent_send' ? 'UntrustedAgent' : 'ExternalNetwork');
    state.seen.push(...credentialValues(output.content));
    const warning = this.warnings.get(call.callId);
    if (!warning) return output;
    this.warnings.delete(call.callId);
    return { ...output, content: `${warning}\n\n${output.content}` };
  }

  authorize(call: ToolCallInfo): { deny: string } | undefined {
    const sink = this.sinkOf(call.tool);
    if (!sink) return undefined;
    const action = (this.config().sinks as Record<string, SinkAction | undefined>)[sink] ?? 'block';
    if (action === 'off') return undefined;
    const state = this.turn(call.turnId);
    const hits = this.check(sink, call, state);
    if (!hits.length) return undefined;
    const rules = [...new Set(hits.map((h) => h.rule))];
    const labels = [...state.labels];
    const reason = `taint tracking (${sink}): the call carries ${[...new Set(hits.map((h) => h.what))].join(' and ')} [${rules.join(', ')}]${labels.length ? ` in a turn that read untrusted input (${labels.join(', ')})` : ''}`;
    this.events.publish('taint.violation', { agentId: call.agent.id, tool: call.tool, sink, rules, action, labels });
    this.log.warn({ agent_id: call.agent.id, tool: call.tool, sink, rules, action, labels }, 'taint violation');
    if (action === 'block') return { deny: `${reason}. Blocked by policy ([taint.sinks] ${sink} = "block").` };
    if (action === 'warn') this.warnings.set(call.callId, `[TAINT WARNING: ${reason}. The call ran because the policy only warns.]`);
    return undefined;
  }

  private sinkOf(tool: string): string | undefined {
    if (tool.startsWith('mcp_')) return 'mcp';
    return ['shell_exec', 'web_fetch', 'agent_send', 'file_write'].includes(tool) ? tool : undefined;
  }

  private check(sink: string, call: ToolCallInfo, state: TurnTaint): Hit[] {
    const known = [...ownSecrets(), ...state.seen];
    const input = call.input;
    switch (sink) {
      case 'shell_exec':
        return state.labels.size ? injectionHits(stringsOf(input.command)) : [];
      case 'web_fetch': {
        let host = '';
        try {
          host = new URL(String(input.url)).hostname.toLowerCase();
        } catch {
          return [];
        }
        if (state.namedHosts.has(host) || this.config().trusted_hosts.includes(host)) return [];
        const sent = `${String(input.url)}\n${stringsOf(input.headers)}\n${stringsOf(input.body)}`;
        return [...secretHits(sent, known), ...piiHits(sent)];
      }
      case 'agent_send':
        return secretHits(stringsOf(input.message), known);
      case 'mcp': {
        const args = stringsOf(input);
        return [...secretHits(args, known), ...piiHits(args)];
      }
      default:
        return secretHits(stringsOf(input.content), ownSecrets()).filter((h) => h.rule === 'known_secret');
    }
  }

  private turn(turnId: string): TurnTaint {
    let state = this.turns.get(turnId);
    if (!state) {
      state = { labels: new Set(), namedHosts: new Set(), seen: [] };
      this.turns.set(turnId, state);
      if (this.turns.size > MAX_TURNS) this.turns.delete(this.turns.keys().next().value!);
    }
    return state;
  }
}
