/**
 * Writes the agent.toml of an agent_spawn child. TOML basic strings accept
 * JSON's escapes (\" \\ \n \uXXXX); DEL is the one character JSON leaves raw
 * that TOML forbids, so it is escaped too.
 */
export interface ChildManifest {
  name: string;
  description: string;
  provider: string;
  model: string;
  systemPrompt: string;
  tools: string[];
  network: string[];
  shell: string[];
  memoryRead: string[];
  memoryWrite: string[];
}

const str = (s: string) => JSON.stringify(s).replace(/\u007f/g, '\\u007f');
const list = (items: string[]) => `[${items.map(str).join(', ')}]`;

export function childManifestToml(m: ChildManifest): string {
  return [
    `name = ${str(m.name)}`,
    `version = "0.1.0"`,
    `description = ${str(m.description)}`,
    '',
    '[model]',
    `provider = ${str(m.provider)}`,
    `model = ${str(m.model)}`,
    `system_prompt = ${str(m.systemPrompt)}`,
    '',
    '[capabilities]',
    `tools = ${list(m.tools)}`,
    `network = ${list(m.network)}`,
    `shell = ${list(m.shell)}`,
    `memory_read = ${list(m.memoryRead)}`,
    `memory_write = ${list(m.memoryWrite)}`,
    'agent_spawn = false',
    '',
  ].join('\n');
}
