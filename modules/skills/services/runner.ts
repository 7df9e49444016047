/**
 * Runs a skill tool. Scripts (python, node, shell) run in the tools module's subprocess sandbox with the skill's
 * JSON protocol: stdin gets {"tool", "input", "config"?}, stdout answers (JSON, or text taken as {"result"});
 * a non-zero exit, a timeout or too much output is an error result. WASM tools go to the wasm module's runtime.
 */
import path from 'node:path';
import type { ToolContext, ToolOutput } from '@talon/agents';
import type { SandboxService } from '@talon/tools';
import type { WasmRuntime } from '@talon/wasm';
import type { LoadedSkill } from './store.ts';
import type { SkillsConfig } from '../config.ts';
import { entryInside } from './validate.ts';
import { passthroughFor } from './env.ts';

export interface RunnerDeps {
  sandbox: () => SandboxService | undefined;
  wasm: () => WasmRuntime | undefined;
  config: () => SkillsConfig;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const fail = (content: string): ToolOutput => ({ content, isError: true });

export async function runSkillTool(skill: LoadedSkill, tool: string, input: Record<string, unknown>, ctx: ToolContext, deps: RunnerDeps): Promise<ToolOutput> {
  const m = skill.manifest;
  const entry = m.entry && entryInside(skill.dir, m.entry);
  if (!entry) return fail(`skill '${skill.name}': its entry '${m.entry ?? ''}' is missing`);
  const config = deps.config();
  const env = passthroughFor(skill.name, m.envPassthrough, config);
  if (m.runtime === 'Wasm') return runWasm(skill, entry, tool, input, ctx, env, deps);
  const sandbox = deps.sandbox();
  if (!sandbox) return fail(`skill '${skill.name}' needs the subprocess sandbox (the tools module is not running)`);
  const interpreter = m.runtime === 'Python' ? config.python : m.runtime === 'Node' ? config.node : config.shell;
  const timeoutSecs = Math.min(m.timeoutSecs, config.script_timeout_secs);
  const envelope = { tool, input, ...(Object.keys(m.config).length && { config: m.config }) };
  const result = await sandbox.run({
    command: `${quote(interpreter)} ${quote(entry)}`,
    cwd: ctx.workspace,
    envPassthrough: env,
    env: { SKILL_DIR: skill.dir, SKILL_NAME: skill.name },
    stdin: JSON.stringify(envelope),
    timeoutMs: timeoutSecs * 1000,
    maxOutputBytes: config.max_output_bytes,
    signal: ctx.signal,
  });
  if (result.aborted) return fail(`skill tool '${tool}' was stopped`);
  if (result.timedOut) return fail(`skill tool '${tool}' timed out after ${timeoutSecs} s and was killed`);
  if (result.stdoutTruncated || result.stderrTruncated) return fail(`skill tool '${tool}' printed more than ${config.max_output_bytes} bytes and was stopped`);
  if (result.exitCode !== 0)
    return fail(`skill tool '${tool}' failed (exit ${result.exitCode ?? 'signal'}): ${result.stderr.trim().slice(-4000) || 'no error output'}`);
  return answer(result.stdout);
}

async function runWasm(
  skill: LoadedSkill,
  entry: string,
  tool: string,
  input: Record<string, unknown>,
  ctx: ToolContext,
  envNames: string[],
  deps: RunnerDeps,
) {
  const wasm = deps.wasm();
  if (!wasm) return fail(`skill '${skill.name}' is a WASM skill and the wasm module is not running`);
  const env = Object.fromEntries(envNames.filter((n) => process.env[n] !== undefined).map((n) => [n, process.env[n]!]));
  const result = await wasm.run({
    modulePath: entry,
    tool,
    input,
    config: skill.manifest.config,
    capabilities: skill.manifest.capabilities,
    env,
    timeoutMs: Math.min(skill.manifest.timeoutSecs, deps.config().script_timeout_secs) * 1000,
    signal: ctx.signal,
  });
  if (!result.ok) return fail(`skill tool '${tool}' (${path.basename(entry)}): ${result.error}`);
  return answer(typeof result.output === 'string' ? result.output : JSON.stringify(result.output));
}

/** JSON stays JSON (an object with a non-null "error" is a failed call); other text becomes {"result"}. */
function answer(stdout: string): ToolOutput {
  const text = stdout.trim();
  try {
    const value = JSON.parse(text) as unknown;
    const failed = typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { error?: unknown }).error != null;
    return { content: JSON.stringify(value), ...(failed && { isError: true }) };
  } catch {
    return { content: JSON.stringify({ result: text }) };
  }
}
