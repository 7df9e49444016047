/** How hands and instances look in answers. */
import type { HandDefinition, HandInstance } from '@talon/hands';
import { agentName } from './agent-manifest.ts';
import { isLive } from './instances.ts';
import { optionViews, requirementViews, requirementsMet } from './requirements.ts';

export function handSummary(def: HandDefinition, instances: HandInstance[]) {
  const requirements = requirementViews(def);
  const live = instances.find(isLive);
  return {
    id: def.id,
    name: def.name,
    version: def.version,
    description: def.description,
    category: def.category,
    icon: def.icon,
    tags: def.tags,
    tools: def.tools,
    source: def.source,
    is_custom: def.source === 'custom',
    agents_count: def.agents.length,
    requirements_met: requirementsMet(requirements),
    requirements: requirements.map(({ key, label, satisfied, optional }) => ({ key, label, satisfied, optional })),
    active: Boolean(live),
    instance_id: live?.id ?? null,
    degraded: Boolean(live?.degraded),
    dashboard_metrics: def.metrics.length,
    has_settings: def.settings.length > 0,
    settings_count: def.settings.length,
    schedules_count: def.schedules.length,
    triggers_count: def.triggers.length,
    metadata: def.metadata,
  };
}

export function handDetail(def: HandDefinition, instances: HandInstance[]) {
  return {
    ...handSummary(def, instances),
    requirements: requirementViews(def),
    skills: def.skills,
    mcp_servers: def.mcp_servers,
    allowed_plugins: def.allowed_plugins,
    routing: def.routing,
    agents: def.agents.map((a) => ({ ...a, agent_name: agentName(def.id, a.role) })),
    settings: def.settings.map((s) => ({ ...s, options: optionViews(s) })),
    schedules: def.schedules,
    triggers: def.triggers,
    dashboard: { metrics: def.metrics },
    skill_files: Object.fromEntries(Object.entries(def.skill_files).map(([role, text]) => [role ? `SKILL-${role}.md` : 'SKILL.md', text.length])),
    instances: instances.map((i) => ({ instance_id: i.id, status: i.status })),
  };
}

export function instanceView(i: HandInstance, def: HandDefinition | undefined) {
  const coordinator = def?.agents.find((a) => a.coordinator)?.role ?? Object.keys(i.agents)[0] ?? null;
  const agentId = coordinator ? (i.agents[coordinator] ?? null) : null;
  return {
    instance_id: i.id,
    hand_id: i.hand_id,
    hand_name: def?.name ?? i.hand_id,
    hand_icon: def?.icon ?? '',
    status: i.status,
    degraded: i.degraded,
    agent_id: agentId,
    agent_name: agentId && coordinator ? agentName(i.hand_id, coordinator) : null,
    agent_ids: i.agents,
    coordinator_role: coordinator,
    schedule_ids: i.jobs,
    trigger_ids: i.triggers,
    activated_at: i.activated_at,
    updated_at: i.updated_at,
  };
}
