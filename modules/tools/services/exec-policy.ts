/**
 * Decides whether shell_exec may run a command line: the configured exec
 * policy (deny | allowlist | full) and the agent manifest's capabilities.shell
 * globs both have to agree. Pure, so it is unit-tested without spawning.
 */
import path from 'node:path';
import { execMode, type ExecPolicyConfig } from '../config.ts';
import { anyGlob } from './globs.ts';
import { parseShellLine, programOf } from './shell-words.ts';

export type Verdict = { allowed: true } | { allowed: false; reason: string };

/** Programs that run their arguments as another command; the wrapped command is checked in their place. */
const WRAPPERS = new Set(['env', 'nice', 'nohup', 'timeout', 'time', 'command', 'exec']);

/** Options that make a safe bin run another program. */
const EXEC_OPTIONS: Record<string, RegExp> = { sort: /^--compress-program/ };

export function checkCommand(command: string, policy: Pick<ExecPolicyConfig, 'mode' | 'allowlist' | 'safe_bins'>, shellCaps: readonly string[]): Verdict {
  const mode = execMode(policy.mode);
  if (mode === 'deny') return { allowed: false, reason: "shell_exec is disabled by the exec policy (mode = 'deny')" };
  if (!shellCaps.length)
    return { allowed: false, reason: 'shell_exec is not permitted: the agent manifest grants no shell commands (capabilities.shell is empty)' };
  const capsOpen = shellCaps.includes('*');
  if (mode === 'full' && capsOpen) return { allowed: true };

  const parsed = parseShellLine(command);
  if (parsed.error) return { allowed: false, reason: `cannot parse the command: ${parsed.error}` };
  if (parsed.substitutions.length) {
    return {
      allowed: false,
      reason: `command substitution (${[...new Set(parsed.substitutions)].join(', ')}) is not allowed unless the exec policy is 'full' and capabilities.shell is ["*"]`,
    };
  }
  if (!parsed.commands.length) return { allowed: false, reason: 'empty command' };
  for (let i = 0; i < parsed.commands.length; i++) {
    const verdict = checkSimple(parsed.commands[i], parsed.texts[i], mode, policy, shellCaps, capsOpen);
    if (!verdict.allowed) return verdict;
  }
  return { allowed: true };
}

function checkSimple(
  words: string[],
  text: string,
  mode: 'allowlist' | 'full',
  policy: Pick<ExecPolicyConfig, 'allowlist' | 'safe_bins'>,
  shellCaps: readonly string[],
  capsOpen: boolean,
): Verdict {
  const found = programOf(words);
  if (!found) return { allowed: true }; // only assignments or redirections
  const { program, args } = found;
  if (WRAPPERS.has(program)) {
    // Skip the wrapper's options, assignments and numbers (nice -n 5, timeout 10s); an option's
    // non-numeric value is then taken for the program and refused, so this fails closed.
    const first = args.findIndex((a) => !a.startsWith('-') && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(a) && !/^\d+(\.\d+)?[smhd]?$/.test(a));
    if (first >= 0) {
      const inner = args.slice(first);
      return checkSimple(inner, inner.join(' '), mode, policy, shellCaps, capsOpen);
    }
  }
  const normalized = [program, ...args].join(' ');
  const candidates = [normalized, text, program];
  if (!capsOpen && !shellCaps.some((p) => candidates.some((c) => anyGlob([p], c)))) {
    return { allowed: false, reason: `command '${program}' is not permitted by the agent's capabilities.shell (${shellCaps.join(', ')})` };
  }
  if (mode === 'allowlist') {
    const runsOther = EXEC_OPTIONS[program] && args.some((a) => EXEC_OPTIONS[program].test(a));
    const safe = !program.includes('/') && policy.safe_bins.includes(program) && !runsOther;
    const listed = policy.allowlist.length > 0 && candidates.some((c) => anyGlob(policy.allowlist, c));
    if (!safe && !listed) {
      return {
        allowed: false,
        reason: `command '${path.basename(program)}' is not allowed by the exec policy (mode = 'allowlist'); add it to [tools.exec_policy] allowlist or safe_bins, or set mode = 'full'`,
      };
    }
  }
  return { allowed: true };
}
