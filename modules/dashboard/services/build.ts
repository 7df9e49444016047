/**
 * Builds the app when dist/ is missing (a checkout started without `npm ci`, or an install that skipped the prepare
 * step). It runs scripts/build-dashboard.mjs in a child process, so a slow or failing build never blocks start-up
 * or the rest of the service; until it is done GET / says so.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface BuildResult {
  ok: boolean;
  /** The last lines the build printed, for the log and the page that says it failed. */
  output: string;
}

/** `into`: a build with third-party modules' views (their folders), into another folder (services/coverage.ts). */
export function runBuild(repoRoot: string, signal: AbortSignal, into?: { out: string; modules: string[] }): Promise<BuildResult> {
  const args = into ? ['--out', into.out, ...into.modules.flatMap((m) => ['--module', m])] : [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts', 'build-dashboard.mjs'), ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ ok: false, output: `${output}\n${err.message}`.trim() }));
    child.on('close', (code) => resolve({ ok: code === 0, output: output.trim() }));
  });
}
