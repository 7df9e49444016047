/**
 * Checkpoint figures: the latency a snapshot adds to a file_write (the
 * beforeToolCall tap, as the agent loop awaits it) in a workspace of 1,000
 * small files. Two cases: the agent wrote a handful of them (the touched list
 * is short), and the agent wrote all 1,000 (every snapshot re-stages 1,000
 * paths). Each measured write changes a file, so every snapshot commits.
 * Target: p50 ≤ 60 ms. The p50 of one bare `git --version` through
 * simple-git is printed too: a snapshot costs one or two git processes, so
 * that figure shows how loaded the machine was.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleGit } from 'simple-git';
import { startTestKernel } from '@talon/testing';
import type { agentHooks, AgentRecord, ToolCallInfo } from '@talon/agents';
import { percentile } from './util.ts';

const FILES = 1000;
const RUNS = 200;
const WARMUP = 10;

function workspace(): { dir: string; files: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-bench-ckpt-ws-'));
  const files: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const rel = path.join(`pkg${i % 20}`, `module${i}.ts`);
    mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), `export const value${i} = ${i};\n`.repeat(10));
    files.push(rel);
  }
  return { dir, files };
}

function call(ws: string, tool: string, input: Record<string, unknown>): ToolCallInfo {
  const agent = { id: 'bench-agent', sessionId: 'bench-session', workspace: ws } as AgentRecord;
  return { agent, sessionId: 'bench-session', turnId: 't', callId: 'c', tool, input, workspace: ws };
}

export async function checkpointsBench() {
  const k = await startTestKernel({ only: ['checkpoints', 'agents'], config: 'log_level = "warn"\n' });
  const dirs: string[] = [];
  try {
    // The checkpoints module taps the agents module's catalogue; the bench calls the hook as the agent loop does.
    const hooks = k.kernel.hooks.catalogue('agents.hooks')!.hooks as ReturnType<typeof agentHooks.create>;

    const measure = async (ws: string, targets: string[]) => {
      const times: number[] = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const target = targets[i % targets.length];
        const started = performance.now();
        await hooks.beforeToolCall.promise(call(ws, 'file_write', { path: target, content: '' }));
        const ms = performance.now() - started;
        writeFileSync(path.join(ws, target), `// write ${i}\n`); // what file_write then does
        if (i >= WARMUP) times.push(ms);
      }
      return times;
    };
    const round = (n: number) => Math.round(n * 10) / 10;

    const few = workspace();
    dirs.push(few.dir);
    const fewTimes = await measure(few.dir, few.files.slice(0, 5));

    const all = workspace();
    dirs.push(all.dir);
    // The agent touched every file: one apply_patch naming all 1,000 records them (and commits them once).
    const patch = `*** Begin Patch\n${all.files.map((f) => `*** Update File: ${f}\n@@\n-x\n+y`).join('\n')}\n*** End Patch`;
    await hooks.beforeToolCall.promise(call(all.dir, 'apply_patch', { patch }));
    const allTimes = await measure(all.dir, all.files);

    const spawns: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await simpleGit().raw(['--version']);
      spawns.push(performance.now() - started);
    }

    return {
      'one bare git process through simple-git (machine baseline) p50 ms': round(percentile(spawns, 50)),
      'snapshot added to file_write (1,000-file workspace, 5 files touched) p50 ms': round(percentile(fewTimes, 50)),
      'snapshot added to file_write (1,000-file workspace, 5 files touched) p95 ms': round(percentile(fewTimes, 95)),
      'snapshot added to file_write (1,000-file workspace, all 1,000 touched) p50 ms': round(percentile(allTimes, 50)),
      'snapshot added to file_write (1,000-file workspace, all 1,000 touched) p95 ms': round(percentile(allTimes, 95)),
      'target p50 ms': 60,
      runs: RUNS,
    };
  } finally {
    await k.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
