/**
 * POST /api/plugins/{name}/install-deps: the plugin's dependency file installed into the plugin folder, with
 * network (packages come from the package index) but the sandbox's cleared environment and time limit:
 * requirements.txt → pip --target .deps (on the hooks' PYTHONPATH), package.json → npm --prefix (node_modules).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { SandboxService } from '@talon/tools';
import type { LoadedPlugin } from './store.ts';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface DepsOutcome {
  name: string;
  runtime: string;
  status: 'installed' | 'nothing_to_install' | 'error' | 'timeout';
  file: string | null;
  command: string | null;
  message: string;
}

function plan(p: LoadedPlugin): { file: string; argv: string[] } | undefined {
  const declared = p.manifest?.requirements;
  const candidates = declared ? [declared] : ['requirements.txt', 'package.json'];
  const file = candidates.find((f) => existsSync(path.join(p.dir, f)));
  if (!file) return undefined;
  if (file.endsWith('package.json')) return { file, argv: ['npm', 'install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', p.dir] };
  return {
    file,
    argv: ['python3', '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', path.join(p.dir, '.deps'), '-r', path.join(p.dir, file)],
  };
}

export async function installPluginDeps(p: LoadedPlugin, sandbox: SandboxService, timeoutMs: number): Promise<DepsOutcome> {
  const base = { name: p.name, runtime: p.runtime };
  const step = plan(p);
  if (!step) return { ...base, status: 'nothing_to_install', file: null, command: null, message: 'the plugin has no requirements.txt or package.json' };
  const command = step.argv.join(' ');
  const out = await sandbox.run({
    command: step.argv.map(shellQuote).join(' '),
    cwd: p.dir,
    envPassthrough: ['PATH', 'LANG', 'http_proxy', 'https_proxy', 'no_proxy', 'PIP_INDEX_URL', 'npm_config_registry'],
    timeoutMs,
    maxOutputBytes: 256 * 1024,
  });
  if (out.timedOut) return { ...base, status: 'timeout', file: step.file, command, message: `stopped after ${timeoutMs / 1000} s` };
  if (out.exitCode === 0) return { ...base, status: 'installed', file: step.file, command, message: 'installed' };
  const tail = (out.stderr || out.stdout).trim().split('\n').slice(-3).join(' | ').slice(0, 500);
  return { ...base, status: 'error', file: step.file, command, message: `exit code ${out.exitCode}${tail ? `: ${tail}` : ''}` };
}
