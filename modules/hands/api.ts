/**
 * Contract of the hands module: hand definitions (HAND.toml) and their instances, read-only, for modules that show
 * or react to them; and the events a hand's lifecycle publishes.
 */
import { defineEvents, payload, serviceRef } from '@talon/module-sdk';

export type SettingType = 'select' | 'toggle' | 'text';

export interface HandSettingOption {
  value: string;
  label: string;
  /** The option needs this environment variable (a provider key). */
  provider_env?: string;
  /** The option needs this program on PATH. */
  binary?: string;
}

export interface HandSetting {
  key: string;
  label: string;
  description: string;
  setting_type: SettingType;
  default: string;
  options: HandSettingOption[];
}

export type RequirementType = 'binary' | 'env_var' | 'api_key' | 'any_env_var';

export interface HandRequirement {
  key: string;
  label: string;
  requirement_type: RequirementType;
  /** A program name, a variable name, or for any_env_var a comma-separated list of names. */
  check_value: string;
  optional: boolean;
  description: string;
  /** [requires.install]: package-manager commands by platform (linux_apt, linux_dnf, linux_pacman, macos, windows, pip…) and hints. */
  install: Record<string, unknown>;
}

export interface HandAgentSpec {
  role: string;
  coordinator: boolean;
  description: string;
  provider: string;
  model: string;
  system_prompt: string;
  max_tokens?: number;
  temperature?: number;
  max_iterations?: number;
  /** Tools this role may not use (removed from the hand's tools). */
  tool_blocklist: string[];
  /** Narrow the hand's skills / MCP servers for this role (intersected). */
  skills?: string[];
  mcp_servers?: string[];
  capabilities: { network: string[]; memory_read: string[]; memory_write: string[]; shell: string[] };
  max_llm_tokens_per_hour?: number;
}

export interface HandSchedule {
  role: string;
  name: string;
  /** A 5-field cron expression, "every 5m" or "at <ISO time>". */
  schedule: string;
  tz?: string;
  prompt: string;
}

export interface HandTrigger {
  role: string;
  /** A trigger pattern as POST /api/triggers takes it. */
  pattern: unknown;
  prompt_template: string;
  max_fires: number;
}

export interface HandMetric {
  label: string;
  memory_key: string;
  format: string;
}

export interface HandDefinition {
  id: string;
  version: string;
  name: string;
  description: string;
  category: string;
  icon: string;
  tags: string[];
  tools: string[];
  skills: string[];
  mcp_servers: string[];
  allowed_plugins: string[];
  requirements: HandRequirement[];
  settings: HandSetting[];
  /** Coordinator first, then in file order. */
  agents: HandAgentSpec[];
  schedules: HandSchedule[];
  triggers: HandTrigger[];
  metrics: HandMetric[];
  metadata: Record<string, unknown>;
  routing: { aliases: string[]; weak_aliases: string[] };
  /** SKILL.md text shared by every role ('') and SKILL-<role>.md per role. */
  skill_files: Record<string, string>;
  /** 'bundled' (ships with the service, cannot be uninstalled) or 'custom'. */
  source: 'bundled' | 'custom';
  path: string;
}

/** 'Active', 'Paused', or 'Error: <message>'. */
export type InstanceStatus = string;

export interface HandInstance {
  id: string;
  hand_id: string;
  status: InstanceStatus;
  /** Role → agent id. */
  agents: Record<string, string>;
  jobs: string[];
  triggers: string[];
  degraded: boolean;
  events_processed: number;
  errors: number;
  last_error: string | null;
  activated_at: string;
  updated_at: string;
}

export interface HandsCatalog {
  definitions(): HandDefinition[];
  definition(id: string): HandDefinition | undefined;
  instances(): HandInstance[];
  /** The instance an agent belongs to. */
  instanceOfAgent(agentId: string): HandInstance | undefined;
}

export const handsCatalog = serviceRef<HandsCatalog>('hands.catalog');

export const handEvents = defineEvents('hands', {
  'hand.activated': payload<{ instanceId: string; handId: string; agentIds: string[] }>(),
  'hand.paused': payload<{ instanceId: string; handId: string }>(),
  'hand.resumed': payload<{ instanceId: string; handId: string }>(),
  'hand.deactivated': payload<{ instanceId: string; handId: string }>(),
  'hand.failed': payload<{ instanceId: string; handId: string; error: string }>(),
});
