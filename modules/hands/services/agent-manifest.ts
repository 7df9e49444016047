/**
 * The agent.toml of one role of a hand instance: named `<hand>:<role>`, tagged with the hand, the instance and the
 * role; the hand's tools (minus the role's blocklist, plus agent_send when the hand has several roles), skills and
 * MCP servers narrowed by the role, and a system prompt made of the role's prompt, the roster of the other roles
 * and the hand's SKILL text. Settings are added at each model call (they can change while the instance runs).
 */
import { stringify } from 'smol-toml';
import type { HandAgentSpec, HandDefinition } from '@talon/hands';

export const agentName = (handId: string, role: string) => `${handId}:${role}`;
export const instanceTag = (instanceId: string) => `hand_instance:${instanceId}`;

/** The role's own list narrowed to the hand's (an empty hand list allows all). */
function narrow(own: string[] | undefined, hand: string[]): string[] {
  if (!own) return hand;
  return hand.length ? own.filter((x) => hand.includes(x)) : own;
}

function systemPrompt(def: HandDefinition, spec: HandAgentSpec, maxSkillChars: number): string {
  const parts = [spec.system_prompt.trim() || `You are the ${spec.role} agent of the ${def.name} hand. ${spec.description || def.description}`.trim()];
  const others = def.agents.filter((a) => a.role !== spec.role);
  if (others.length) {
    const roster = others.map((a) => `- ${agentName(def.id, a.role)} (${a.role}${a.coordinator ? ', coordinator' : ''}): ${a.description || 'no description'}`);
    parts.push(`## Your team\nThe other agents of this hand; reach them with agent_send:\n${roster.join('\n')}`);
  }
  const skill = def.skill_files[spec.role] ?? def.skill_files[''];
  if (skill && maxSkillChars > 0) parts.push(`## Reference knowledge\n${skill.trim().slice(0, maxSkillChars)}`);
  return parts.join('\n\n');
}

export function agentManifest(def: HandDefinition, spec: HandAgentSpec, instanceId: string, maxSkillChars: number): string {
  const tools = def.tools.filter((t) => !spec.tool_blocklist.includes(t));
  if (def.agents.length > 1 && !tools.includes('agent_send') && !spec.tool_blocklist.includes('agent_send')) tools.push('agent_send');
  const model: Record<string, unknown> = { provider: spec.provider, model: spec.model, system_prompt: systemPrompt(def, spec, maxSkillChars) };
  if (spec.max_tokens !== undefined) model.max_tokens = Math.max(1, Math.round(spec.max_tokens));
  if (spec.temperature !== undefined) model.temperature = spec.temperature;
  const doc: Record<string, unknown> = {
    name: agentName(def.id, spec.role),
    description: spec.description || def.description,
    tags: ['hand', `hand:${def.id}`, instanceTag(instanceId), `hand_role:${spec.role}`],
    skills: narrow(spec.skills, def.skills),
    mcp_servers: narrow(spec.mcp_servers, def.mcp_servers),
    allowed_plugins: def.allowed_plugins,
    model,
    capabilities: { tools, ...spec.capabilities },
    hand: { id: def.id, instance: instanceId, role: spec.role, coordinator: spec.coordinator },
  };
  if (spec.max_llm_tokens_per_hour !== undefined) doc.resources = { max_llm_tokens_per_hour: Math.round(spec.max_llm_tokens_per_hour) };
  if (spec.max_iterations !== undefined) doc.autonomous = { max_iterations: Math.max(1, Math.round(spec.max_iterations)) };
  return stringify(doc);
}
