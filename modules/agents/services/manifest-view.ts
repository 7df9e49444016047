/**
 * An agent's manifest as it stands (GET /api/agents/{id}/manifest, the builder's edit mode): the TOML it was spawned
 * or last replaced with, with the settings changed since through the other routes (PUT tools, model, PATCH fields)
 * written into it. Every other key of the stored text is kept, so saving it back through PATCH manifest_toml
 * changes only what the person changed.
 */
import { parse, stringify } from 'smol-toml';
import type { AgentRecord } from '@talon/agents';

type Table = Record<string, unknown>;

export function currentManifest(agent: AgentRecord, storedToml: string): string {
  const doc = parse(storedToml) as Table;
  const model = table(doc, 'model');
  const caps = table(doc, 'capabilities');
  doc.name = agent.name;
  doc.description = agent.description;
  doc.tags = agent.tags;
  doc.skills = agent.skills;
  doc.mcp_servers = agent.mcpServers;
  model.provider = agent.model.provider;
  model.model = agent.model.model;
  delete model.name; // the reference's alias of `model`: one key says it
  model.system_prompt = agent.systemPrompt;
  caps.tools = agent.tools;
  return stringify(doc);
}

function table(doc: Table, key: string): Table {
  const value = doc[key];
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Table;
  const fresh: Table = {};
  doc[key] = fresh;
  return fresh;
}
