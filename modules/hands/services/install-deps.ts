/**
 * POST /api/hands/{id}/install-deps: for each unmet program requirement, the package-manager command the hand
 * declares for this platform ([requires.install] linux_apt, linux_dnf, linux_pacman, macos, windows, else pip,
 * npm, cargo). Only package managers run, never a shell line: metacharacters are refused, each command is bounded
 * in time and runs in the subprocess sandbox. Results per requirement.
 */
import { mkdirSync } from 'node:fs';
import type { HandDefinition, HandRequirement } from '@talon/hands';
import type { SandboxService } from '@talon/tools';
import { satisfied, which } from './requirements.ts';

export type DepStatus = 'already_installed' | 'installed' | 'skipped' | 'no_command' | 'refused' | 'error' | 'timeout';

export interface DepResult {
  key: string;
  status: DepStatus;
  command: string | null;
  message: string;
}

const MANAGERS = new Set([
  'apt',
  'apt-get',
  'dnf',
  'yum',
  'pacman',
  'zypper',
  'apk',
  'brew',
  'winget',
  'choco',
  'scoop',
  'pip',
  'pip3',
  'pipx',
  'npm',
  'cargo',
  'gem',
  'go',
]);
const META = /[;&|`$<>(){}\\\n\r*?!#~'"[\]]/;
const WORD = /^[A-Za-z0-9@%+=:,./_-]+$/;
/** Flags that keep a manager from asking a question nobody can answer. */
const NON_INTERACTIVE: Record<string, string> = { apt: '-y', 'apt-get': '-y', dnf: '-y', yum: '-y', pacman: '--noconfirm', zypper: '-n', apk: '' };

/** The keys of [requires.install] to try here, best first. */
function platformKeys(): string[] {
  if (process.platform === 'darwin') return ['macos'];
  if (process.platform === 'win32') return ['windows'];
  const linux = [
    ['apt-get', 'linux_apt'],
    ['dnf', 'linux_dnf'],
    ['pacman', 'linux_pacman'],
  ]
    .filter(([bin]) => which(bin))
    .map(([, key]) => key);
  return [...linux, 'linux'];
}

/** The argument list of an allowed command, or the reason it is refused. */
export function parseInstallCommand(line: string, isRoot: boolean): { argv: string[] } | { refused: string } {
  if (META.test(line)) return { refused: 'the command holds shell metacharacters' };
  let words = line.trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { refused: 'the command is empty' };
  if (!words.every((w) => WORD.test(w))) return { refused: 'the command holds characters a package name never has' };
  const sudo = words[0] === 'sudo';
  if (sudo) words = words.slice(1);
  if (!MANAGERS.has(words[0] ?? '')) return { refused: `'${words[0] ?? ''}' is not a package manager this service runs` };
  const flag = NON_INTERACTIVE[words[0]];
  if (flag && !words.includes(flag)) words = [...words, flag];
  return { argv: sudo && !isRoot ? ['sudo', '-n', ...words] : words };
}

export interface InstallDepsDeps {
  sandbox: SandboxService;
  timeoutMs: number;
  workDir: string;
}

export async function installDeps(def: HandDefinition, deps: InstallDepsDeps): Promise<DepResult[]> {
  mkdirSync(deps.workDir, { recursive: true });
  const results: DepResult[] = [];
  for (const r of def.requirements) results.push(await installOne(r, deps));
  return results;
}

async function installOne(r: HandRequirement, deps: InstallDepsDeps): Promise<DepResult> {
  const base = { key: r.key, command: null };
  if (satisfied(r)) return { ...base, status: 'already_installed', message: 'already satisfied' };
  if (r.requirement_type !== 'binary')
    return { ...base, status: 'skipped', message: `set ${r.check_value.split(',').join(' or ')} in the service's environment` };
  const key = [...platformKeys(), 'pip', 'npm', 'cargo'].find((k) => typeof r.install[k] === 'string');
  if (!key) return { ...base, status: 'no_command', message: 'the hand declares no install command for this platform' };
  const line = r.install[key] as string;
  const parsed = parseInstallCommand(line, process.getuid?.() === 0);
  if ('refused' in parsed) return { key: r.key, command: line, status: 'refused', message: parsed.refused };
  const outcome = await deps.sandbox.run({
    command: parsed.argv.map((w) => `'${w}'`).join(' '),
    cwd: deps.workDir,
    envPassthrough: ['PATH', 'LANG', 'http_proxy', 'https_proxy', 'no_proxy'],
    env: { DEBIAN_FRONTEND: 'noninteractive' },
    timeoutMs: deps.timeoutMs,
    maxOutputBytes: 64 * 1024,
  });
  const command = parsed.argv.join(' ');
  if (outcome.timedOut) return { key: r.key, command, status: 'timeout', message: `stopped after ${deps.timeoutMs / 1000} s` };
  if (outcome.exitCode === 0 && satisfied(r)) return { key: r.key, command, status: 'installed', message: 'installed' };
  const tail = (outcome.stderr || outcome.stdout).trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  const why = outcome.exitCode === 0 ? `the command succeeded but '${r.check_value}' is still not on PATH` : `exit code ${outcome.exitCode}`;
  return { key: r.key, command, status: 'error', message: tail ? `${why}: ${tail}` : why };
}
