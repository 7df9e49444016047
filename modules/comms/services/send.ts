/**
 * POST /api/comms/send: an address names the recipient — `agent:<id or name>` on this node, or
 * `peer:<node_id>/agent:<name>` on a connected peer — and the reply comes back in the answer.
 */
import { badRequest, isUuid, notFound } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner } from '@talon/agents';
import type { PeerNetwork } from '@talon/peers';
import type { CommsLog } from './log.ts';

export interface SendDeps {
  agents: () => AgentRegistry;
  runner: () => AgentRunner;
  peers: () => PeerNetwork | undefined;
  log: CommsLog;
}

export interface SendReply {
  ok: true;
  to: string;
  agent_id: string;
  response: string;
  input_tokens: number;
  output_tokens: number;
}

export function findAgent(registry: AgentRegistry, ref: string): AgentRecord | undefined {
  return isUuid(ref) ? registry.get(ref.toLowerCase()) : registry.findByName(ref);
}

/** The sender as an agent of this node, when `from` names one ('agent:<id or name>'). */
function senderAgent(registry: AgentRegistry, from: string): AgentRecord | undefined {
  const m = /^agent:(.+)$/.exec(from);
  return m ? findAgent(registry, m[1]) : undefined;
}

export async function send(deps: SendDeps, input: { to: string; content: string; from: string }): Promise<SendReply> {
  const registry = deps.agents();
  const sender = senderAgent(registry, input.from);
  const peer = /^peer:([^/]+)\/agent:(.+)$/.exec(input.to);
  if (peer) return sendToPeer(deps, peer[1], peer[2], input, sender);
  const local = /^agent:(.+)$/.exec(input.to);
  if (!local) throw badRequest(`'to' must be agent:<id or name> or peer:<node_id>/agent:<name>, not '${input.to}'`);
  const target = findAgent(registry, local[1]);
  if (!target) throw notFound(`agent '${local[1]}' not found`);
  deps.log.add({
    kind: 'agent_message',
    source_id: sender?.id ?? null,
    source_name: sender?.name ?? input.from,
    target_id: target.id,
    target_name: target.name,
    detail: input.content,
  });
  const message = sender ? `[message from agent ${sender.name}]\n${input.content}` : input.content;
  const result = await deps.runner().run({ agentId: target.id, message, origin: 'comms' });
  return { ok: true, to: input.to, agent_id: target.id, response: result.response, input_tokens: result.inputTokens, output_tokens: result.outputTokens };
}

async function sendToPeer(
  deps: SendDeps,
  nodeId: string,
  agent: string,
  input: { to: string; content: string; from: string },
  sender?: AgentRecord,
): Promise<SendReply> {
  const network = deps.peers();
  if (!network) throw notFound(`no peer '${nodeId}': the peers module is not running`);
  deps.log.add({
    kind: 'agent_message',
    source_id: sender?.id ?? null,
    source_name: sender?.name ?? input.from,
    target_id: null,
    target_name: `${agent}@${nodeId}`,
    detail: input.content,
  });
  const reply = await network.sendAgentMessage(nodeId, agent, input.content, sender?.name ?? input.from);
  return { ok: true, to: input.to, agent_id: reply.agent_id, response: reply.response, input_tokens: 0, output_tokens: 0 };
}
