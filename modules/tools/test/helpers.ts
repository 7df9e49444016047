/** A fake ToolContext over a temporary workspace, and fake agent services. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { AgentManifest, AgentRecord, AgentRegistry, AgentRunner, ToolContext, TurnRequest, TurnResult } from '@talon/agents';
import type { KvEntry, KvMemory } from '@talon/memory';
import type { NetFetch } from '@talon/net';
import { type ToolsConfig, DEFAULT_SAFE_BINS } from '../config.ts';
import type { ToolDeps } from '../services/deps.ts';
import { createSandbox } from '../services/sandbox.ts';

export function tempDir(prefix = 'talon-tools-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function config(
  overrides: { exec_policy?: Partial<ToolsConfig['exec_policy']>; web?: Partial<ToolsConfig['web']>; invoke?: Partial<ToolsConfig['invoke']> } = {},
): ToolsConfig {
  return {
    exec_policy: {
      mode: 'allowlist',
      allowlist: [],
      safe_bins: DEFAULT_SAFE_BINS,
      timeout_secs: 30,
      max_timeout_secs: 600,
      max_output_bytes: 102400,
      env_passthrough: ['PATH', 'LANG'],
      no_output_timeout_secs: 0,
      isolation: 'auto',
      ...overrides.exec_policy,
    },
    web: { allow_hosts: [], allow_cidrs: [], max_chars: 50000, max_bytes: 10485760, timeout_secs: 30, max_redirects: 5, ...overrides.web },
    invoke: { allowlist: [], ...overrides.invoke },
    tool_invoke: { enabled: false, allowlist: [] },
  };
}

export function agentRecord(
  over: { id?: string; name?: string; workspace?: string; tools?: string[]; capabilities?: Partial<AgentManifest['capabilities']> } = {},
): AgentRecord {
  const capabilities: AgentManifest['capabilities'] = {
    tools: over.tools ?? ['*'],
    network: [],
    memory_read: [],
    memory_write: [],
    shell: [],
    ...over.capabilities,
  };
  const name = over.name ?? 'tester';
  return {
    id: over.id ?? '11111111-1111-4111-8111-111111111111',
    name,
    state: 'Running',
    mode: 'Normal',
    createdAt: new Date().toISOString(),
    sessionId: '22222222-2222-4222-8222-222222222222',
    manifest: { name, model: { provider: 'openai', model: 'fake-model' }, capabilities, extra: {} },
    description: '',
    tags: [],
    systemPrompt: '',
    model: { provider: 'openai', model: 'fake-model' },
    tools: capabilities.tools,
    skills: [],
    mcpServers: [],
    identity: {},
    config: {},
    workspace: over.workspace ?? '',
    maxLlmTokensPerHour: 0,
  };
}

export interface FakeCtx extends ToolContext {
  notices: string[];
  controller: AbortController;
}

export function toolCtx(agent: AgentRecord): FakeCtx {
  const controller = new AbortController();
  const notices: string[] = [];
  return {
    agent,
    sessionId: agent.sessionId,
    turnId: 'turn-1',
    callId: 'call-1',
    workspace: agent.workspace,
    signal: controller.signal,
    log: pino({ level: 'silent' }),
    notifyOwner: (t) => notices.push(t),
    notices,
    controller,
  };
}

export class FakeKv implements KvMemory {
  readonly data = new Map<string, Map<string, unknown>>();
  private of(agent: string) {
    let m = this.data.get(agent);
    if (!m) this.data.set(agent, (m = new Map()));
    return m;
  }
  async get(agentId: string, key: string): Promise<KvEntry | undefined> {
    const m = this.of(agentId);
    return m.has(key) ? { key, value: m.get(key) } : undefined;
  }
  async set(agentId: string, key: string, value: unknown): Promise<void> {
    this.of(agentId).set(key, value);
  }
  async delete(agentId: string, key: string): Promise<boolean> {
    return this.of(agentId).delete(key);
  }
  async list(agentId: string, page: { limit?: number; offset?: number } = {}): Promise<KvEntry[]> {
    const all = [...this.of(agentId).entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => ({ key, value }));
    const offset = page.offset ?? 0;
    return all.slice(offset, offset + (page.limit ?? 100));
  }
  async exportAll(agentId: string): Promise<KvEntry[]> {
    return this.list(agentId, { limit: Infinity });
  }
  async importAll(agentId: string, entries: KvEntry[]): Promise<number> {
    for (const e of entries) await this.set(agentId, e.key, e.value);
    return entries.length;
  }
  async deleteAgent(agentId: string): Promise<void> {
    this.data.delete(agentId);
  }
}

export class FakeRegistry implements AgentRegistry {
  readonly agents: AgentRecord[] = [];
  readonly spawned: Array<{ manifestToml: string; parentId?: string }> = [];
  list() {
    return this.agents;
  }
  get(id: string) {
    return this.agents.find((a) => a.id === id);
  }
  findByName(name: string) {
    return this.agents.find((a) => a.name === name);
  }
  async spawn(input: { manifestToml: string; parentId?: string }) {
    this.spawned.push(input);
    const name = /^name = "(.*)"$/m.exec(input.manifestToml)?.[1] ?? 'child';
    const rec = agentRecord({ id: `33333333-3333-4333-8333-33333333333${this.spawned.length}`, name });
    this.agents.push(rec);
    return rec;
  }
  async kill(id: string) {
    const i = this.agents.findIndex((a) => a.id === id);
    if (i < 0) return false;
    this.agents.splice(i, 1);
    return true;
  }
  setModel(): Promise<AgentRecord> {
    throw new Error('not used');
  }
  setState(): Promise<AgentRecord> {
    throw new Error('not used');
  }
}

export class FakeRunner implements AgentRunner {
  readonly requests: TurnRequest[] = [];
  reply = 'pong';
  async run(request: TurnRequest): Promise<TurnResult> {
    this.requests.push(request);
    return {
      turnId: 't2',
      agentId: request.agentId,
      sessionId: 's',
      response: this.reply,
      inputTokens: 1,
      outputTokens: 1,
      iterations: 1,
      costUsd: 0,
      interrupted: false,
    };
  }
  stop() {
    return false;
  }
  interrupt() {}
  subscribe() {
    return () => undefined;
  }
  isRunning() {
    return false;
  }
}

export function fakeDeps(over: { config?: ToolsConfig; memory?: KvMemory; registry?: AgentRegistry; runner?: AgentRunner; net?: NetFetch } = {}): ToolDeps {
  const cfg = over.config ?? config();
  const registry = over.registry ?? new FakeRegistry();
  const runner = over.runner ?? new FakeRunner();
  const sandbox = createSandbox(() => cfg.exec_policy.isolation);
  const net = () => {
    if (!over.net) throw new Error('this test gave the tools no net service');
    return over.net;
  };
  return { config: () => cfg, registry: () => registry, runner: () => runner, memory: () => over.memory, net, sandbox };
}
