import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { shadowGit } from '../modules/checkpoints/services/git.ts';
import { locate, ensureRepo } from '../modules/checkpoints/services/shadow.ts';
const root = mkdtempSync(path.join(tmpdir(), 'prof-root-'));
const ws = mkdtempSync(path.join(tmpdir(), 'prof-ws-'));
for (let i = 0; i < 5; i++) writeFileSync(path.join(ws, `f${i}`), 'x');
const loc = locate(root, ws);
await ensureRepo(loc, new AbortController().signal);
const git = shadowGit(loc);
const t: Record<string, number[]> = { update: [], diff: [], commit: [] };
for (let i = 0; i < 30; i++) {
  writeFileSync(path.join(ws, `f${i % 5}`), `v${i}`);
  let s = performance.now();
  await git.raw(['update-index', '--add', '--remove', '--', 'f0', 'f1', 'f2', 'f3', 'f4']);
  t.update.push(performance.now() - s); s = performance.now();
  await git.raw(['diff', '--cached', '--name-only', '--no-renames', '-z']);
  t.diff.push(performance.now() - s); s = performance.now();
  await git.commit(`m ${i}`, [], { '--no-verify': null });
  t.commit.push(performance.now() - s);
}
for (const [k, v] of Object.entries(t)) console.log(k, v.sort((a, b) => a - b)[15].toFixed(1));
