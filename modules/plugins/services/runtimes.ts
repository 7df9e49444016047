/**
 * The eleven hook runtimes: how a script of each is launched, the file extension its hooks use, how to ask its
 * launcher for a version, and where to get it. `native` runs the hook file itself (a compiled program or a script
 * with a #! line).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export const RUNTIMES = ['python', 'native', 'v', 'node', 'deno', 'go', 'ruby', 'bash', 'bun', 'php', 'lua'] as const;
export type Runtime = (typeof RUNTIMES)[number];

export interface RuntimeSpec {
  runtime: Runtime;
  aliases: string[];
  /** Program that runs a hook script; null: the hook file is the program. */
  launcher: string | null;
  /** Arguments between the launcher and the script. */
  args: string[];
  ext: string;
  versionArgs: string[];
  installHint: string;
}

export const RUNTIME_SPECS: Record<Runtime, RuntimeSpec> = {
  python: {
    runtime: 'python',
    aliases: ['python3', 'py'],
    launcher: 'python3',
    args: ['-u'],
    ext: '.py',
    versionArgs: ['--version'],
    installHint: 'apt install python3 · brew install python · https://python.org',
  },
  native: {
    runtime: 'native',
    aliases: ['binary', 'exec'],
    launcher: null,
    args: [],
    ext: '',
    versionArgs: [],
    installHint: 'hooks are executables: compile them for this machine and chmod +x',
  },
  v: {
    runtime: 'v',
    aliases: ['vlang'],
    launcher: 'v',
    args: ['-no-retry-compilation', 'run'],
    ext: '.v',
    versionArgs: ['version'],
    installHint: 'https://vlang.io (git clone https://github.com/vlang/v && make)',
  },
  node: {
    runtime: 'node',
    aliases: ['nodejs', 'js'],
    launcher: 'node',
    args: [],
    ext: '.js',
    versionArgs: ['--version'],
    installHint: 'apt install nodejs · brew install node · https://nodejs.org',
  },
  deno: {
    runtime: 'deno',
    aliases: ['ts', 'typescript'],
    launcher: 'deno',
    args: ['run', '--allow-read', '--allow-env', '--quiet'],
    ext: '.ts',
    versionArgs: ['--version'],
    installHint: 'curl -fsSL https://deno.land/install.sh | sh · brew install deno',
  },
  go: {
    runtime: 'go',
    aliases: ['golang'],
    launcher: 'go',
    args: ['run'],
    ext: '.go',
    versionArgs: ['version'],
    installHint: 'apt install golang · brew install go · https://go.dev/dl',
  },
  ruby: {
    runtime: 'ruby',
    aliases: ['rb'],
    launcher: 'ruby',
    args: [],
    ext: '.rb',
    versionArgs: ['--version'],
    installHint: 'apt install ruby · brew install ruby',
  },
  bash: {
    runtime: 'bash',
    aliases: ['sh', 'shell'],
    launcher: 'bash',
    // No start-up files: a bash whose stdin is a socket (Node's pipes are socket pairs) would read ~/.bashrc.
    args: ['--noprofile', '--norc'],
    ext: '.sh',
    versionArgs: ['--version'],
    installHint: 'apt install bash · brew install bash',
  },
  bun: {
    runtime: 'bun',
    aliases: [],
    launcher: 'bun',
    args: ['run'],
    ext: '.ts',
    versionArgs: ['--version'],
    installHint: 'curl -fsSL https://bun.sh/install | bash · brew install oven-sh/bun/bun',
  },
  php: {
    runtime: 'php',
    aliases: [],
    launcher: 'php',
    args: [],
    ext: '.php',
    versionArgs: ['--version'],
    installHint: 'apt install php-cli · brew install php',
  },
  lua: { runtime: 'lua', aliases: [], launcher: 'lua', args: [], ext: '.lua', versionArgs: ['-v'], installHint: 'apt install lua5.4 · brew install lua' },
};

/** A runtime name or alias → the runtime; undefined for an unknown one. */
export function runtimeOf(name: string): Runtime | undefined {
  const lower = name.toLowerCase();
  return RUNTIMES.find((r) => r === lower || RUNTIME_SPECS[r].aliases.includes(lower));
}

/** The runtime a hook file's extension suggests (.ts is deno's; bun must be named). */
export function runtimeForFile(file: string): Runtime {
  const ext = path.extname(file);
  if (!ext) return 'native';
  return RUNTIMES.find((r) => RUNTIME_SPECS[r].ext === ext && r !== 'bun') ?? 'python';
}

/** The full path of a program on PATH (or the path itself when it has a slash and is executable). */
export function which(program: string, pathVar = process.env.PATH ?? ''): string | undefined {
  const candidates = program.includes('/')
    ? [program]
    : pathVar
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, program));
  for (const full of candidates) {
    try {
      if (statSync(full).isFile()) {
        accessSync(full, constants.X_OK);
        return full;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface RuntimeStatus {
  runtime: Runtime;
  launcher: string | null;
  available: boolean;
  version: string | null;
  install_hint: string;
  /** Why it is not available: not on PATH, or no answer to the version question. */
  problem: string | null;
}

// Launchers behind version-manager shims (pyenv, asdf) can take seconds to answer on a busy machine.
const VERSION_TIMEOUT_MS = 15_000;

/** Asks each launcher for its version (bounded); `native` is always available. */
export async function detectRuntime(runtime: Runtime, launcher: string | null): Promise<RuntimeStatus> {
  const spec = RUNTIME_SPECS[runtime];
  const base = { runtime, launcher, install_hint: spec.installHint };
  if (launcher === null) return { ...base, available: true, version: process.platform, problem: null };
  if (!which(launcher)) return { ...base, available: false, version: null, problem: `'${launcher}' is not on PATH` };
  const answer = await new Promise<{ version: string | null; problem: string | null }>((resolve) => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/' };
    execFile(launcher, spec.versionArgs, { timeout: VERSION_TIMEOUT_MS, env }, (err, stdout, stderr) => {
      const line = `${stdout}${stderr}`.trim().split('\n')[0] ?? '';
      if (!err || line) return resolve({ version: line.slice(0, 200), problem: null });
      const why = err.killed ? `no answer within ${VERSION_TIMEOUT_MS / 1000} s` : err.message.split('\n')[0];
      resolve({ version: null, problem: `'${launcher} ${spec.versionArgs.join(' ')}' failed: ${why}` });
    });
  });
  return { ...base, available: answer.version !== null, ...answer };
}
