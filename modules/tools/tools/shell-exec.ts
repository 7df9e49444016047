import type { ToolFactory } from '../services/deps.ts';
import { checkCommand } from '../services/exec-policy.ts';
import { fail, failFrom, ok, optionalInt, requiredString } from '../services/result.ts';
import type { SandboxResult } from '../services/sandbox.ts';

function render(r: SandboxResult, maxOutputBytes: number): string {
  const code = r.exitCode ?? (r.signal ? `killed by ${r.signal}` : -1);
  const note = (t: boolean) => (t ? `\n[output truncated at ${maxOutputBytes} bytes]` : '');
  return `Exit code: ${code}\n\nSTDOUT:\n${r.stdout}${note(r.stdoutTruncated)}\nSTDERR:\n${r.stderr}${note(r.stderrTruncated)}`;
}

export const shellExecTool: ToolFactory = (deps) => ({
  name: 'shell_exec',
  requiresAgent: true,
  description: 'Execute a shell command and return its output. Runs in the agent workspace with a cleared environment, subject to the exec policy.',
  aliases: ['Bash', 'bash', 'exec', 'execute_command', 'run', 'run_command', 'runCommand', 'execute', 'shell', 'fs-exec'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'command line, run with /bin/sh -c' },
      timeout_seconds: { type: 'integer', minimum: 1, description: 'kill the command after this many seconds (default from the exec policy)' },
    },
    required: ['command'],
  },
  async execute(input, ctx) {
    const policy = deps.config().exec_policy;
    let command: string;
    let timeout: number;
    try {
      command = requiredString(input, 'command', 'shell_exec');
      timeout = Math.min(optionalInt(input, 'timeout_seconds') || policy.timeout_secs, policy.max_timeout_secs);
    } catch (err) {
      return failFrom(err);
    }
    if (!ctx.workspace) return fail('shell_exec needs an agent workspace directory, and none is available');
    const verdict = checkCommand(command, policy, ctx.agent.manifest.capabilities.shell ?? []);
    if (!verdict.allowed) return fail(`Command refused: ${verdict.reason}`);
    let result: SandboxResult;
    try {
      result = await deps.sandbox.run({
        command,
        cwd: ctx.workspace,
        envPassthrough: policy.env_passthrough,
        timeoutMs: timeout * 1000,
        idleTimeoutMs: policy.no_output_timeout_secs * 1000,
        maxOutputBytes: policy.max_output_bytes,
        signal: ctx.signal,
        // The shell gets the network only when the agent may use it (web_fetch follows the same list).
        network: (ctx.agent.manifest.capabilities.network ?? []).length > 0,
      });
    } catch (err) {
      return failFrom(err, 'Failed to start the command');
    }
    if (result.timedOut) return fail(`Command timed out after ${timeout} seconds (process tree killed).\n\n${render(result, policy.max_output_bytes)}`);
    if (result.idleTimedOut)
      return fail(`Command printed nothing for ${policy.no_output_timeout_secs} seconds (process tree killed).\n\n${render(result, policy.max_output_bytes)}`);
    if (result.aborted) return fail(`Command aborted: the turn was stopped (process tree killed).\n\n${render(result, policy.max_output_bytes)}`);
    return ok(render(result, policy.max_output_bytes));
  },
});
