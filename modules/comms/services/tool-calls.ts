/**
 * Messages agents route themselves: a successful agent_send (to an agent of this node) or a2a_send (to an external
 * A2A agent) becomes an agent_message of the comms log, so the topology's message edges show who talks to whom.
 */
import type { AgentRegistry, ToolCallInfo, ToolOutput } from '@talon/agents';
import type { CommsLog } from './log.ts';
import { findAgent } from './send.ts';

const text = (value: unknown) => (typeof value === 'string' ? value : '');

export function logToolCall(log: CommsLog, registry: AgentRegistry, call: ToolCallInfo & { output: ToolOutput }): void {
  if (call.output.isError) return;
  if (call.tool === 'agent_send') {
    const target = findAgent(registry, text(call.input.agent_id));
    if (!target) return;
    log.add({
      kind: 'agent_message',
      source_id: call.agent.id,
      source_name: call.agent.name,
      target_id: target.id,
      target_name: target.name,
      detail: text(call.input.message),
    });
  } else if (call.tool === 'a2a_send') {
    log.add({
      kind: 'agent_message',
      source_id: call.agent.id,
      source_name: call.agent.name,
      target_id: null,
      target_name: `${text(call.input.agent)} (A2A)`,
      detail: text(call.input.message),
    });
  }
}
