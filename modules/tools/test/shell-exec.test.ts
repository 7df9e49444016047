import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { shellExecTool } from '../tools/shell-exec.ts';
import type { ToolsConfig } from '../config.ts';
import { agentRecord, config, fakeDeps, tempDir, toolCtx } from './helpers.ts';

/**
 * Host pids of live (not zombie) processes whose command line contains `marker`. Commands run in a PID namespace
 * where the machine offers one, so pids the shell prints ($!) are not host pids: processes are found by a marker.
 */
function running(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmdline.includes(marker) && stat[stat.lastIndexOf(')') + 2] !== 'Z') found.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Unique sleep lengths mark the processes of each test (`sleep 30.0417`). */
let serial = 0;
const marker = () => `sleep 30.0${process.pid % 1000}${++serial}`;

describe('shell_exec', () => {
  const ws = tempDir();
  const markers: string[] = [];
  after(() => {
    for (const m of markers) for (const pid of running(m)) process.kill(pid, 'SIGKILL');
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

  // Each rule is checked with namespaces (where this machine offers them) and with the fallback.
  for (const isolation of ['auto', 'off'] as const) {
    const policy = (over: Partial<ToolsConfig['exec_policy']> = {}) => config({ exec_policy: { mode: 'full', isolation, ...over } });

    it(`isolation ${isolation}: a timeout kills the whole process tree (child and grandchild)`, async () => {
      const tool = shellExecTool(fakeDeps({ config: policy() }));
      const [child, grandchild] = [marker(), marker()];
      markers.push(child, grandchild);
      const run = tool.execute({ command: `sh -c '${grandchild} & ${child}; wait' & wait`, timeout_seconds: 1 }, toolCtx(agent));
      await waitFor(() => running(child).length > 0 && running(grandchild).length > 0, 5000, 'the tree to start');
      const out = await run;
      assert.equal(out.isError, true);
      assert.match(out.content, /^Command timed out after 1 seconds/);
      assert.deepEqual(running(child), [], 'child is gone');
      assert.deepEqual(running(grandchild), [], 'grandchild is gone');
    });

    it(`isolation ${isolation}: aborting the signal kills the tree and reports the stop`, async () => {
      const tool = shellExecTool(fakeDeps({ config: policy() }));
      const ctx = toolCtx(agent);
      const leaf = marker();
      markers.push(leaf);
      const run = tool.execute({ command: `sh -c '${leaf}' & wait` }, ctx);
      await waitFor(() => running(leaf).length > 0, 5000, 'the tree to start');
      ctx.controller.abort();
      const out = await run;
      assert.equal(out.isError, true);
      assert.match(out.content, /^Command aborted/);
      assert.deepEqual(running(leaf), []);
    });

    it(`isolation ${isolation}: background processes do not outlive a command that exits normally, setsid or not`, async () => {
      const tool = shellExecTool(fakeDeps({ config: policy() }));
      const [bg, detached, doubled] = [marker(), marker(), marker()];
      markers.push(bg, detached, doubled);
      // setsid leaves the process group; the double fork also leaves the shell's children (reparented to init).
      const command = `${bg} & setsid ${detached} > /dev/null 2>&1 & sh -c 'setsid ${doubled} > /dev/null 2>&1 &'; sleep 0.3; echo started`;
      const run = tool.execute({ command }, toolCtx(agent));
      await waitFor(() => [bg, detached, doubled].every((m) => running(m).length > 0), 5000, 'the background processes to start');
      const out = await run;
      assert.match(out.content, /^Exit code: 0\n\nSTDOUT:\nstarted/);
      for (const m of [bg, detached, doubled]) assert.deepEqual(running(m), [], `${m} is gone`);
    });

    it(`isolation ${isolation}: no_output_timeout_secs kills a command that stays silent`, async () => {
      const tool = shellExecTool(fakeDeps({ config: policy({ no_output_timeout_secs: 1 }) }));
      const out = await tool.execute({ command: 'echo first; sleep 5; echo never' }, toolCtx(agent));
      assert.equal(out.isError, true);
      assert.match(out.content, /^Command printed nothing for 1 seconds/);
      assert.match(out.content, /STDOUT:\nfirst\n/);
    });
  }

  it('an agent without capabilities.network gets no network in its shell (where namespaces are available)', async (t) => {
    const deps = fakeDeps({ config: full });
    const isolation = await deps.sandbox.isolation();
    if (isolation.method === 'none') return t.skip(`no namespaces here: ${isolation.reason}`);
    const server = net.createServer((s) => s.end()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const port = (server.address() as net.AddressInfo).port;
      const probe = `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log('refused', e.code); process.exit(0) })"`;
      const tool = shellExecTool(deps);
      const offline = await tool.execute({ command: probe }, toolCtx(agent));
      assert.match(offline.content, /STDOUT:\nrefused/);
      const online = await tool.execute({ command: probe }, toolCtx(agentRecord({ workspace: ws.dir, capabilities: { shell: ['*'], network: ['*'] } })));
      assert.match(online.content, /STDOUT:\nconnected/);
    } finally {
      server.close();
    }
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
