/**
 * Test support: a kernel with the checkpoints module whose beforeToolCall tap
 * is driven directly (no agent turn, no model), plus git inspection helpers
 * that read shadow repositories the way a user would.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';
import { agentHooks, type AgentRecord, type ToolCallInfo } from '@talon/agents';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface HookKernel {
  k: TestKernel;
  logs: LogLine[];
  /** Runs the beforeToolCall hook as the agent loop does before a tool; resolves with the milliseconds it took. */
  beforeTool(tool: string, input: Record<string, unknown>, workspace: string): Promise<number>;
  shadowDir(workDir: string): string;
  stop(): Promise<void>;
}

export const AGENT_ID = '6f1c2b9e-8a4d-4c3e-9b7a-1d2e3f4a5b6c';
export const SESSION_ID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

/**
 * Checkpoints with the tools module (its apply_patch parser; it brings the agents module, which owns the hook
 * catalogue). `extra` adds modules (error-envelope, for the {error} bodies of the HTTP tests).
 */
export async function startHookKernel(extra: string[] = []): Promise<HookKernel> {
  const k = await startTestKernel({ only: ['checkpoints', 'tools', ...extra], config: 'log_level = "debug"\n' });
  const logs: LogLine[] = [];
  k.kernel.hooks.kernel.log.line.tap('checkpoints-test', (line) => void logs.push(JSON.parse(line) as LogLine));
  const hooks = k.kernel.hooks.catalogue(agentHooks.id)!.hooks as ReturnType<typeof agentHooks.create>;
  assert.deepEqual(
    hooks.beforeToolCall.taps.map((t) => t.name.replace(/#\d+/, '')),
    ['checkpoints:snapshot'],
    'checkpoints taps beforeToolCall',
  );
  return {
    k,
    logs,
    async beforeTool(tool, input, workspace) {
      const started = performance.now();
      await hooks.beforeToolCall.promise(toolCall(tool, input, workspace));
      return performance.now() - started;
    },
    shadowDir: (workDir) => path.join(k.home, 'data', 'checkpoints', hashName(realpathSync(workDir))),
    stop: () => k.stop(),
  };
}

export function toolCall(tool: string, input: Record<string, unknown>, workspace: string): ToolCallInfo {
  return { agent: fakeAgent(workspace), sessionId: SESSION_ID, turnId: 'turn-1', callId: 'call-1', tool, input, workspace };
}

function fakeAgent(workspace: string): AgentRecord {
  return {
    id: AGENT_ID,
    name: 'writer',
    state: 'Running',
    mode: 'Normal',
    createdAt: new Date().toISOString(),
    sessionId: SESSION_ID,
    manifest: {
      name: 'writer',
      model: { provider: 'openai', model: 'fake-model' },
      capabilities: { tools: ['file_write', 'apply_patch'], network: [], memory_read: [], memory_write: [], shell: [] },
      extra: {},
    },
    description: '',
    tags: [],
    systemPrompt: '',
    model: { provider: 'openai', model: 'fake-model' },
    tools: ['file_write', 'apply_patch'],
    skills: [],
    mcpServers: [],
    identity: {},
    config: {},
    workspace,
    maxLlmTokensPerHour: 0,
  };
}

export function hashName(absolutePath: string): string {
  return createHash('sha256').update(absolutePath, 'utf8').digest('hex').slice(0, 16);
}

export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
}

/** Runs git against a shadow repository like a user would, isolated from this machine's git config. */
export function git(gitDir: string, args: string[], workTree?: string): string {
  return execFileSync('git', ['--git-dir', gitDir, ...(workTree ? ['--work-tree', workTree] : []), ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** Files of the newest commit of a shadow repository, with their contents. */
export function headFiles(gitDir: string): Record<string, string> {
  const names = git(gitDir, ['ls-tree', '-r', '-z', '--name-only', 'HEAD']).split('\0').filter(Boolean);
  return Object.fromEntries(names.map((name) => [name, git(gitDir, ['show', `HEAD:${name}`])]));
}

export function commitCount(gitDir: string): number {
  return Number(git(gitDir, ['rev-list', '--count', 'HEAD']).trim());
}
