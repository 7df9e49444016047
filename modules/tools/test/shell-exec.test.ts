import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { shellExecTool } from '../tools/shell-exec.ts';
import { agentRecord, config, fakeDeps, tempDir, toolCtx } from './helpers.ts';

/** A process counts as gone when it does not exist or is a zombie waiting for a reaper. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitFor(file: string, ms = 3000): Promise<number> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const n = Number(readFileSync(file, 'utf8').trim());
      if (n > 0) return n;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${file} never appeared`);
}

// A child shell that starts a grandchild, both sleeping; their pids land in files.
const TREE = `sh -c 'sleep 30 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait`;

describe('shell_exec', () => {
  const ws = tempDir();
  const pids: number[] = [];
  after(() => {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    ws.cleanup();
  });
  const full = config({ exec_policy: { mode: 'full' } });
  const agent = agentRecord({ workspace: ws.dir, capabilities: { shell: ['*'] } });

  it('runs in the workspace and renders exit code, stdout and stderr', async () => {
    const tool = shellExecTool(fakeDeps({ config: full }));
    const out = await tool.execute({ command: 'pwd; echo oops >&2; exit 3' }, toolCtx(agent));
    assert.equal(out.isError, false);
    assert.equal(out.content, `Exit code: 3\n\nSTDOUT:\n${ws.dir}\n\nSTDERR:\noops\n`);
  });

  it('clears the environment: only passthrough names, HOME is the workspace', async () => {
    process.env.TALON_TOOLS_SECRET = 'do-not-leak';
    try {
      const tool = shellExecTool(fakeDeps({ config: full }));
      const out = await tool.execute({ command: 'env' }, toolCtx(agent));
      assert.doesNotMatch(out.content, /TALON_TOOLS_SECRET|do-not-leak/);
      assert.match(out.content, new RegExp(`^HOME=${ws.dir}$`, 'm'));
      assert.match(out.content, /^PATH=/m);
    } finally {
      delete process.env.TALON_TOOLS_SECRET;
    }
  });

  it('a timeout kills the whole process tree (child and grandchild)', async () => {
    const tool = shellExecTool(fakeDeps({ config: full }));
    const started = Date.now();
    const out = await tool.execute({ command: TREE, timeout_seconds: 1 }, toolCtx(agent));
    assert.ok(Date.now() - started < 5000);
    assert.equal(out.isError, true);
    assert.match(out.content, /^Command timed out after 1 seconds/);
    const child = await waitFor(path.join(ws.dir, 'child.pid'));
    const grandchild = await waitFor(path.join(ws.dir, 'grandchild.pid'));
    pids.push(child, grandchild);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(child), false, 'child is gone');
    assert.equal(alive(grandchild), false, 'grandchild is gone');
  });

  it('aborting the signal kills the tree and reports the stop', async () => {
    const tool = shellExecTool(fakeDeps({ config: full }));
    const ctx = toolCtx(agent);
    const run = tool.execute({ command: `rm -f child.pid grandchild.pid; ${TREE}` }, ctx);
    const child = await waitFor(path.join(ws.dir, 'child.pid'));
    const grandchild = await waitFor(path.join(ws.dir, 'grandchild.pid'));
    pids.push(child, grandchild);
    ctx.controller.abort();
    const out = await run;
    assert.equal(out.isError, true);
    assert.match(out.content, /^Command aborted/);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(child), false);
    assert.equal(alive(grandchild), false);
  });

  it('background processes do not outlive a command that exits normally', async () => {
    const tool = shellExecTool(fakeDeps({ config: full }));
    const out = await tool.execute({ command: 'sleep 30 & echo $! > bg.pid' }, toolCtx(agent));
    assert.match(out.content, /^Exit code: 0/);
    const bg = await waitFor(path.join(ws.dir, 'bg.pid'));
    pids.push(bg);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(bg), false);
  });

  it('caps each output stream at max_output_bytes', async () => {
    const tool = shellExecTool(fakeDeps({ config: config({ exec_policy: { max_output_bytes: 1024 } }) }));
    const out = await tool.execute({ command: "head -c 5000 /dev/zero | tr '\\0' a" }, toolCtx(agent));
    const stdout = /STDOUT:\n(a*)\n/.exec(out.content)?.[1] ?? '';
    assert.equal(stdout.length, 1024);
    assert.match(out.content, /\[output truncated at 1024 bytes\]/);
  });

  it('deny mode refuses without running anything', async () => {
    const tool = shellExecTool(fakeDeps({ config: config({ exec_policy: { mode: 'deny' } }) }));
    const out = await tool.execute({ command: 'echo hi > made.txt' }, toolCtx(agent));
    assert.equal(out.isError, true);
    assert.match(out.content, /^Command refused: .*mode = 'deny'/);
    assert.throws(() => readFileSync(path.join(ws.dir, 'made.txt')));
  });

  it('allowlist mode runs safe bins and refuses others', async () => {
    const tool = shellExecTool(fakeDeps({ config: config() }));
    const ok = await tool.execute({ command: 'echo hi | wc -c' }, toolCtx(agent));
    assert.match(ok.content, /^Exit code: 0\n\nSTDOUT:\n\s*3\n/);
    const refused = await tool.execute({ command: 'rm -rf .' }, toolCtx(agent));
    assert.equal(refused.isError, true);
    assert.match(refused.content, /not allowed by the exec policy \(mode = 'allowlist'\)/);
  });

  it("the manifest's capabilities.shell applies on top of the policy", async () => {
    const tool = shellExecTool(fakeDeps({ config: full }));
    const none = await tool.execute({ command: 'echo hi' }, toolCtx(agentRecord({ workspace: ws.dir })));
    assert.match(none.content, /capabilities\.shell is empty/);
    const limited = toolCtx(agentRecord({ workspace: ws.dir, capabilities: { shell: ['echo *'] } }));
    assert.match((await tool.execute({ command: 'echo hi' }, limited)).content, /^Exit code: 0/);
    assert.match((await tool.execute({ command: 'ls' }, limited)).content, /not permitted by the agent's capabilities\.shell/);
  });
});
