/**
 * The context engine: the default one (the agents module's prompt and history), extended by the hooks of the
 * configured plugins. Which plugins run for an agent: [context_engine] plugin and plugin_stack, narrowed by the
 * agent's allowed_plugins and each plugin's only_for_agent_ids, ordered by priority then stack order.
 *   bootstrap              once per agent and plugin load, before its first turn
 *   ingest                 before each turn: memories joined to the system prompt of the turn's model calls
 *   assemble               at the turn's first model call: may replace the system prompt
 *   transform_tool_result  each tool result: may replace what the model gets
 *   after_turn             after each turn, with the session's recent messages
 *   compact                after a turn when the session is long: its summary joins later prompts
 *   prepare_subagent / merge_subagent  when an agent spawns a subagent / the subagent ends
 * A failed hook follows the plugin's on_hook_failure: warn or skip (the default engine goes on), abort (a turn
 * that has not started yet is refused).
 */
import type { Logger } from 'pino';
import type { EventChannel } from '@talon/module-sdk';
import type { AgentRecord, ModelCallContext, SessionStore, ToolCallInfo, ToolOutput, TurnInfo, TurnRecord } from '@talon/agents';
import type { HookName, pluginEvents } from '@talon/plugins';
import type { PromptScanner } from '@talon/prompt-guard';
import type { ContextEngineConfig, PluginsConfig } from '../config.ts';
import type { FailurePolicy } from './manifest.ts';
import type { HookReply } from './protocol.ts';
import type { HookRunner } from './runner.ts';
import type { LoadedPlugin, PluginStore } from './store.ts';

export interface EngineDeps {
  store: PluginStore;
  runner: HookRunner;
  engineConfig: () => ContextEngineConfig;
  config: () => PluginsConfig;
  sessions: () => SessionStore | undefined;
  scanner: () => PromptScanner | undefined;
  events: EventChannel<typeof pluginEvents>;
  log: Logger;
}

interface TurnContext {
  at: number;
  memories: Array<{ plugin: string; text: string }>;
  system?: string;
  assembled: boolean;
}

const TURN_TTL_MS = 15 * 60_000;
const RECENT_MESSAGES = 50;

export class ContextEngineService {
  private readonly turns = new Map<string, TurnContext>();
  private readonly summaries = new Map<string, string>();
  private readonly bootstrapped = new Set<string>();

  constructor(private readonly deps: EngineDeps) {}

  configured(): string[] {
    const { plugin, plugin_stack } = this.deps.engineConfig();
    return [...new Set([plugin, ...plugin_stack].filter(Boolean))];
  }

  stackFor(agent: AgentRecord): LoadedPlugin[] {
    const allowed = agent.manifest.extra.allowed_plugins;
    const allowList = Array.isArray(allowed) && allowed.length ? new Set(allowed.map(String)) : undefined;
    const order = this.configured();
    return order
      .map((name) => this.deps.store.get(name))
      .filter((p): p is LoadedPlugin => p?.status === 'loaded' && !!p.manifest)
      .filter((p) => !allowList || allowList.has(p.name))
      .filter((p) => !p.manifest!.onlyForAgentIds.length || p.manifest!.onlyForAgentIds.includes(agent.id))
      .sort((a, b) => b.manifest!.priority - a.manifest!.priority || order.indexOf(a.name) - order.indexOf(b.name));
  }

  /** Calls one hook on every plugin of the stack that has it, in parallel; answers in stack order (failures handled). */
  private async fanOut(
    agent: AgentRecord,
    hook: HookName,
    request: Record<string, unknown>,
  ): Promise<{ replies: Array<[LoadedPlugin, HookReply]>; abort?: string }> {
    const plugins = this.stackFor(agent).filter((p) => p.manifest!.hooks[hook]);
    const settled = await Promise.allSettled(plugins.map((p) => this.deps.runner.call(p, hook, request, agent.id)));
    const replies: Array<[LoadedPlugin, HookReply]> = [];
    let abort: string | undefined;
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') replies.push([plugins[i], s.value]);
      else if (this.failed(plugins[i], hook, s.reason as Error, agent.id) === 'abort')
        abort ??= `context engine plugin '${plugins[i].name}' failed in ${hook}: ${(s.reason as Error).message}`;
    });
    return { replies, abort };
  }

  private failed(plugin: LoadedPlugin, hook: HookName, err: Error, agentId: string): FailurePolicy {
    const policy = plugin.manifest!.onHookFailure ?? this.deps.config().on_hook_failure;
    this.deps.events.publish('plugin.hook_failed', { plugin: plugin.name, hook, agentId, error: err.message, policy });
    const entry = { plugin: plugin.name, hook, agent_id: agentId, err: err.message, policy };
    if (policy === 'skip') this.deps.log.debug(entry, 'plugin hook failed; skipped');
    else this.deps.log.warn(entry, policy === 'abort' ? 'plugin hook failed; the turn is refused' : 'plugin hook failed; the default context engine goes on');
    return policy;
  }

  async beforeTurn(info: TurnInfo): Promise<{ status: number; error: string } | undefined> {
    this.sweep();
    if (!this.stackFor(info.agent).length) return undefined;
    const boot = await this.bootstrap(info.agent);
    if (boot) return { status: 503, error: boot };
    const { replies, abort } = await this.fanOut(info.agent, 'ingest', {
      agent_id: info.agent.id,
      message: info.message,
      peer_id: null,
      session_id: info.sessionId,
      origin: info.origin ?? null,
    });
    if (abort) return { status: 503, error: abort };
    const memories = replies.flatMap(([p, r]) => (r.memories ?? []).map((text) => ({ plugin: p.name, text })));
    this.turns.set(info.turnId, { at: Date.now(), memories: this.screened(memories), assembled: false });
    return undefined;
  }

  private async bootstrap(agent: AgentRecord): Promise<string | undefined> {
    const fresh = this.stackFor(agent).filter((p) => p.manifest!.hooks.bootstrap && !this.bootstrapped.has(`${p.name}:${p.generation}:${agent.id}`));
    if (!fresh.length) return undefined;
    fresh.forEach((p) => this.bootstrapped.add(`${p.name}:${p.generation}:${agent.id}`));
    const { abort } = await this.fanOut(agent, 'bootstrap', {
      agent_id: agent.id,
      context_window_tokens: null,
      stable_prefix_mode: false,
      max_recall_results: 10,
    });
    return abort;
  }

  /** Plugin output is untrusted text bound for a prompt: what the scanner blocks is dropped. */
  private screened(memories: Array<{ plugin: string; text: string }>) {
    const scanner = this.deps.scanner();
    return memories.filter((m) => {
      const report = scanner?.scan(m.text);
      if (!report?.blocked) return true;
      this.deps.log.warn({ plugin: m.plugin, findings: scanner!.summary(report) }, 'plugin memory dropped by the prompt scan');
      return false;
    });
  }

  async beforeModelCall(call: ModelCallContext): Promise<ModelCallContext> {
    const turn = call.turnId ? this.turns.get(call.turnId) : undefined;
    const stack = this.stackFor(call.agent);
    if (!stack.length) return call;
    let system = call.system;
    if (turn && !turn.assembled) {
      turn.assembled = true;
      const { replies } = await this.fanOut(call.agent, 'assemble', {
        agent_id: call.agent.id,
        messages: await this.recent(call.sessionId),
        system_prompt: system,
        context_window_tokens: null,
      });
      const replaced = replies.map(([, r]) => r.systemPrompt).filter((s): s is string => typeof s === 'string' && s.trim() !== '');
      if (replaced.length) turn.system = replaced[replaced.length - 1];
    }
    if (turn?.system) system = turn.system;
    const parts: string[] = [];
    const summary = this.summaries.get(call.agent.id);
    if (summary) parts.push(`## Conversation summary (context plugin)\n${summary}`);
    if (turn?.memories.length)
      parts.push(`## Context from plugins\n${turn.memories.map((m) => `- [${m.plugin}] ${m.text.replace(/\s+/g, ' ').trim()}`).join('\n')}`);
    if (!parts.length) return system === call.system ? call : { ...call, system };
    return { ...call, system: `${system}\n\n${parts.join('\n\n').slice(0, this.deps.config().max_context_chars)}` };
  }

  async toolResult(output: ToolOutput, info: ToolCallInfo): Promise<ToolOutput> {
    const plugins = this.stackFor(info.agent).filter((p) => p.manifest!.hooks.transform_tool_result);
    let current = output;
    for (const p of plugins) {
      const request = {
        agent_id: info.agent.id,
        tool_name: info.tool,
        tool_use_id: info.callId,
        input: info.input,
        content: current.content,
        is_error: Boolean(current.isError),
        status: current.isError ? 'error' : 'ok',
      };
      try {
        const reply = await this.deps.runner.call(p, 'transform_tool_result', request, info.agent.id);
        current = { ...current, content: reply.content ?? current.content };
      } catch (err) {
        this.failed(p, 'transform_tool_result', err as Error, info.agent.id);
      }
    }
    return current;
  }

  async afterTurn(record: TurnRecord): Promise<void> {
    this.turns.delete(record.turnId);
    if (!this.stackFor(record.agent).length) return;
    const messages = await this.recent(record.sessionId);
    await this.fanOut(record.agent, 'after_turn', { agent_id: record.agent.id, session_id: record.sessionId, messages });
    const limit = this.deps.config().compact_after_messages;
    const total = (await this.deps.sessions()?.messages(record.sessionId))?.length ?? 0;
    if (limit > 0 && total > limit) {
      const { replies } = await this.fanOut(record.agent, 'compact', {
        agent_id: record.agent.id,
        messages,
        model: record.agent.model.model,
        context_window_tokens: null,
      });
      const summary = replies
        .map(([, r]) => r.summary)
        .filter((s): s is string => !!s?.trim())
        .pop();
      if (summary) this.summaries.set(record.agent.id, this.screened([{ plugin: 'compact', text: summary }])[0]?.text ?? '');
    }
  }

  /** prepare_subagent (spawned) or merge_subagent (ended), for the parent's plugins; off the caller's path. */
  subagent(hook: 'prepare_subagent' | 'merge_subagent', child: AgentRecord, parent: AgentRecord | undefined): void {
    if (!parent) return;
    void this.fanOut(parent, hook, { parent_id: parent.id, child_id: child.id }).catch((err: Error) =>
      this.deps.log.warn({ err: err.message }, `${hook} failed`),
    );
  }

  private async recent(sessionId: string) {
    return ((await this.deps.sessions()?.messages(sessionId)) ?? []).slice(-RECENT_MESSAGES).map((m) => ({ role: m.role.toLowerCase(), content: m.content }));
  }

  private sweep(): void {
    const old = Date.now() - TURN_TTL_MS;
    for (const [id, t] of this.turns) if (t.at < old) this.turns.delete(id);
  }
}
