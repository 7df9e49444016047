/** A kernel with hands, agents, the scheduler, triggers, memory, tools and the hub; an OpenAI-format fake provider. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export const MODULES = ['hands', 'agents', 'scheduler', 'triggers', 'tasks', 'memory', 'tools', 'hub', 'prompt-guard', 'llm-openai', 'error-envelope'];

export async function startEnv(options: { extra?: string; home?: string; modules?: string[] } = {}): Promise<Env> {
  const k = await startAgentTestKernel({
    only: options.modules ?? MODULES,
    config: `[skills]\nwatch = false\n${options.extra ?? ''}`,
    home: options.home,
    keepHome: Boolean(options.home),
  });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** A three-role hand with a setting of each type, a requirement met here, a schedule, a trigger and a metric. */
export function teamHand(id: string, extra = ''): string {
  return `id = "${id}"
version = "1.2.0"
name = "Team ${id}"
description = "A test team"
category = "development"
icon = "lucide:users"
tools = ["file_read", "memory_store", "memory_recall"]
allowed_plugins = ["recall-plugin"]

[[requires]]
key = "sh"
label = "A POSIX shell"
requirement_type = "binary"
check_value = "sh"

[[settings]]
key = "tone"
label = "Tone"
setting_type = "select"
default = "plain"
[[settings.options]]
value = "plain"
label = "Plain words"
[[settings.options]]
value = "formal"
label = "Formal"

[[settings]]
key = "approval_mode"
label = "Approval"
setting_type = "toggle"
default = "true"

[[settings]]
key = "auth_token"
label = "Token"
setting_type = "text"
default = ""

[agents.lead]
coordinator = true
description = "Leads"
system_prompt = "You lead the ${id} team."

[agents.worker]
description = "Works"
tool_blocklist = ["file_read"]
[agents.worker.model]
temperature = 0.2
system_prompt = "You do the work."

[agents.checker]
description = "Checks"
model = "default"

[[schedules]]
role = "worker"
name = "hourly"
cron = "0 * * * *"
prompt = "Do the hourly work."

[[triggers]]
pattern = "task_posted"
prompt_template = "A task: {{event}}"

[dashboard]
[[dashboard.metrics]]
label = "Done"
memory_key = "done_count"
format = "number"
${extra}`;
}

/** Writes a folder of files (relative path → text). */
export function writeFolder(dir: string, files: Record<string, string>): string {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

export async function install(k: TestKernel, toml: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return k.request('/api/hands/install', { method: 'POST', json: { toml_content: toml, ...extra } });
}

export async function activate(k: TestKernel, id: string, body: Record<string, unknown> = {}): Promise<Response> {
  return k.request(`/api/hands/${id}/activate`, { method: 'POST', json: body });
}
