import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setConfig } from '@talon/testing';
import { AGENT_ID, SESSION_ID, commitCount, git, hashName, headFiles, startHookKernel, tempDir, type HookKernel } from './support.ts';

let hk: HookKernel;
const made: string[] = [];

before(async () => {
  hk = await startHookKernel();
});
after(async () => {
  await hk.stop();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const dir = tempDir('talon-ckpt-ws-');
  made.push(dir);
  return dir;
}

/** What the file_write tool does, with the hook first as the agent loop runs it. */
async function fileWrite(ws: string, target: string, content: string): Promise<number> {
  const ms = await hk.beforeTool('file_write', { path: target, content }, ws);
  const absolute = path.resolve(ws, target);
  mkdirSync(path.dirname(absolute), { recursive: true });
  writeFileSync(absolute, content);
  return ms;
}

const warnings = (text: string) => hk.logs.filter((l) => l.level === 40 && l.msg.includes(text));

describe('shadow repository', () => {
  test('lives in <checkpoints>/<first 16 hex of SHA-256 of the path>, git internals directly inside, the working dir gets no .git', async () => {
    const ws = workspace();
    writeFileSync(path.join(ws, 'notes.md'), 'v1');
    await fileWrite(ws, 'notes.md', 'v2');
    const expected = path.join(hk.k.home, 'data', 'checkpoints', hashName(ws));
    assert.match(path.basename(expected), /^[0-9a-f]{16}$/);
    assert.equal(hk.shadowDir(ws), expected);
    for (const entry of ['HEAD', 'objects', 'refs', 'index']) assert.ok(existsSync(path.join(expected, entry)), `${entry} in the shadow folder`);
    assert.ok(!existsSync(path.join(expected, '.git')), 'no .git subfolder');
    assert.ok(!existsSync(path.join(ws, '.git')), 'the working directory gets no .git');
    // A standard repository: plain git reads it.
    assert.equal(git(expected, ['show', 'HEAD:notes.md']), 'v1');
    assert.equal(git(expected, ['rev-parse', '--is-bare-repository']).trim(), 'false');
  });

  test('file_write: the commit holds the state before the write; message carries agent, session, tool and path', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    await fileWrite(ws, 'src/app.ts', 'first');
    // A file that did not exist yet is not added: nothing to commit.
    assert.ok(existsSync(path.join(shadow, 'HEAD')));
    assert.throws(() => git(shadow, ['rev-parse', '--verify', '--quiet', 'HEAD']), 'no commit for a new file');
    await fileWrite(ws, 'src/app.ts', 'second');
    assert.deepEqual(headFiles(shadow), { 'src/app.ts': 'first' });
    const log = git(shadow, ['log', '-1', '--format=%an <%ae>%n%B']);
    assert.match(log, /^Talon Checkpoint <checkpoints@talon\.local>\ncheckpoint: file_write src\/app\.ts\n/);
    const trailer = (key: string) => git(shadow, ['log', '-1', `--format=%(trailers:key=${key},valueonly)`]).trim();
    assert.equal(trailer('Agent-Id'), AGENT_ID);
    assert.equal(trailer('Session-Id'), SESSION_ID);
    assert.equal(trailer('Tool'), 'file_write');
    assert.equal(trailer('Path'), 'src/app.ts');
    // Unchanged since the last checkpoint: no empty commit.
    const count = commitCount(shadow);
    await hk.beforeTool('file_write', { path: 'src/other.ts', content: 'x' }, ws);
    assert.equal(commitCount(shadow), count + 1, 'src/app.ts changed to "second" since the last checkpoint');
    await hk.beforeTool('file_write', { path: 'src/other.ts', content: 'x' }, ws);
    assert.equal(commitCount(shadow), count + 1, 'nothing changed: no new commit');
  });

  test('tracks only files the service wrote, never the rest of the folder', async () => {
    const ws = workspace();
    writeFileSync(path.join(ws, 'user-secret.txt'), 'mine');
    writeFileSync(path.join(ws, 'written.txt'), 'old');
    await fileWrite(ws, 'written.txt', 'new');
    assert.deepEqual(Object.keys(headFiles(hk.shadowDir(ws))), ['written.txt']);
  });

  test('apply_patch: every Add/Update/Delete/move path is snapshotted; later changes and deletions are committed', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    for (const name of ['a.txt', 'b.txt', 'old.txt', 'd.txt']) writeFileSync(path.join(ws, name), `${name} before`);
    const patch = [
      '*** Begin Patch',
      '*** Update File: a.txt',
      '@@',
      '-a.txt before',
      '+a.txt after',
      '*** Delete File: b.txt',
      '*** Add File: c.txt',
      '+new file',
      '*** Update File: old.txt -> moved.txt',
      '@@',
      '-old.txt before',
      '+moved',
      '  *** Update File: d.txt  ',
      '*** Move to: e.txt',
      '@@',
      '-d.txt before',
      '+e',
      '*** End Patch',
    ].join('\n');
    await hk.beforeTool('apply_patch', { patch }, ws);
    assert.deepEqual(headFiles(shadow), { 'a.txt': 'a.txt before', 'b.txt': 'b.txt before', 'd.txt': 'd.txt before', 'old.txt': 'old.txt before' });
    const subject = git(shadow, ['log', '-1', '--format=%s']).trim();
    assert.equal(subject, 'checkpoint: apply_patch a.txt (+6 more)');
    assert.equal(git(shadow, ['log', '-1', '--format=%(trailers:key=Tool,valueonly)']).trim(), 'apply_patch');
    // What the tool does; the next call's snapshot records it (deletions included).
    writeFileSync(path.join(ws, 'a.txt'), 'a.txt after');
    unlinkSync(path.join(ws, 'b.txt'));
    writeFileSync(path.join(ws, 'c.txt'), 'new file');
    unlinkSync(path.join(ws, 'old.txt'));
    writeFileSync(path.join(ws, 'moved.txt'), 'moved');
    await hk.beforeTool('apply_patch', { patch: '*** Begin Patch\n*** Update File: c.txt\n@@\n-new file\n+changed\n*** End Patch' }, ws);
    assert.deepEqual(headFiles(shadow), { 'a.txt': 'a.txt after', 'c.txt': 'new file', 'd.txt': 'd.txt before', 'moved.txt': 'moved' });
  });

  test('an absolute target outside the workspace is checkpointed in the shadow repository of its own folder', async () => {
    const ws = workspace();
    const wider = workspace();
    writeFileSync(path.join(wider, 'config.json'), '{"v":1}');
    await fileWrite(ws, path.join(wider, 'config.json'), '{"v":2}');
    assert.ok(!existsSync(hk.shadowDir(ws)), 'no repository for the workspace');
    assert.deepEqual(headFiles(hk.shadowDir(wider)), { 'config.json': '{"v":1}' });
    // An absolute path inside the workspace belongs to the workspace.
    writeFileSync(path.join(ws, 'in.txt'), 'inside');
    await fileWrite(ws, path.join(ws, 'in.txt'), 'changed');
    assert.deepEqual(headFiles(hk.shadowDir(ws)), { 'in.txt': 'inside' });
  });

  test('other tools, and calls without a workspace, are ignored', async () => {
    const ws = workspace();
    writeFileSync(path.join(ws, 'x.txt'), 'x');
    await hk.beforeTool('shell_exec', { command: 'echo hi > x.txt', path: 'x.txt' }, ws);
    await hk.beforeTool('file_read', { path: 'x.txt' }, ws);
    assert.ok(!existsSync(hk.shadowDir(ws)));
    await hk.beforeTool('file_write', { path: 'package.json', content: '{}' }, '');
    assert.ok(!existsSync(hk.shadowDir(process.cwd())), 'not the service folder');
  });
});

describe('limits', () => {
  test('files over 50 KB are not committed (debug log); the call completes; a file that grows past it leaves the repository', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    writeFileSync(path.join(ws, 'exact.bin'), 'e'.repeat(51200));
    writeFileSync(path.join(ws, 'big.bin'), 'b'.repeat(51201));
    writeFileSync(path.join(ws, 'grows.txt'), 'small');
    await fileWrite(ws, 'exact.bin', 'x');
    assert.equal(headFiles(shadow)['exact.bin']?.length, 51200, 'exactly 50 KB: committed');
    await fileWrite(ws, 'big.bin', 'y');
    assert.equal(readFileSync(path.join(ws, 'big.bin'), 'utf8'), 'y', 'the tool completed');
    assert.ok(!('big.bin' in headFiles(shadow)), 'over 50 KB: not committed');
    const skipped = hk.logs.filter((l) => l.level === 20 && l.msg === 'file over the checkpoint size limit not committed');
    assert.ok(skipped.some((l) => l.path === 'big.bin' && l.bytes === 51201));
    await fileWrite(ws, 'grows.txt', 'g'.repeat(60_000));
    assert.equal(headFiles(shadow)['grows.txt'], 'small');
    // grows.txt is now 60,000 bytes: the next checkpoint drops it instead of keeping the stale small copy.
    await fileWrite(ws, 'exact.bin', 'z');
    assert.ok(!('grows.txt' in headFiles(shadow)));
  });

  test('every excluded folder is skipped wherever it appears in the path', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    const excluded = ['node_modules', 'target', '.venv', 'venv', 'env', '.git', '__pycache__', 'dist', 'build'];
    const targets = excluded.flatMap((dir) => [`${dir}/top.txt`, `src/${dir}/deep/nested.txt`]);
    for (const target of targets) {
      mkdirSync(path.dirname(path.join(ws, target)), { recursive: true });
      writeFileSync(path.join(ws, target), 'existing');
    }
    writeFileSync(path.join(ws, 'kept.txt'), 'kept');
    // Files merely named like a folder are not excluded.
    writeFileSync(path.join(ws, 'build.txt'), 'a file');
    for (const target of [...targets, 'kept.txt', 'build.txt']) await fileWrite(ws, target, 'changed');
    const patch = `*** Begin Patch\n${targets.map((t) => `*** Delete File: ${t}`).join('\n')}\n*** End Patch`;
    await hk.beforeTool('apply_patch', { patch }, ws);
    assert.deepEqual(Object.keys(headFiles(shadow)).sort(), ['build.txt', 'kept.txt']);
    assert.deepEqual(
      [...new Set(git(shadow, ['log', '--format=', '--name-only']).split('\n').filter(Boolean))].sort(),
      ['build.txt', 'kept.txt'],
      'no excluded path in any commit',
    );
  });
});

describe('isolation', () => {
  test("the user's own .git in the working directory is untouched", async () => {
    const ws = workspace();
    const userGit = (args: string[]) =>
      execFileSync('git', args, {
        cwd: ws,
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH,
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_AUTHOR_NAME: 'User',
          GIT_AUTHOR_EMAIL: 'u@example.com',
          GIT_COMMITTER_NAME: 'User',
          GIT_COMMITTER_EMAIL: 'u@example.com',
        },
      });
    userGit(['init', '-q']);
    writeFileSync(path.join(ws, 'app.py'), 'print(1)\n');
    userGit(['add', 'app.py']);
    userGit(['commit', '-q', '-m', 'user commit']);
    // A user hook that must never run for checkpoints.
    writeFileSync(path.join(ws, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ntouch "$(dirname "$0")/../../HOOK_RAN"\n', { mode: 0o755 });
    const state = () => ({
      head: userGit(['rev-parse', 'HEAD']),
      refs: userGit(['for-each-ref']),
      log: userGit(['log', '--all', '--format=%H %s']),
      index: readFileSync(path.join(ws, '.git', 'index')).toString('base64'),
      config: readFileSync(path.join(ws, '.git', 'config'), 'utf8'),
      status: userGit(['status', '--porcelain']),
    });
    const before = state();
    await fileWrite(ws, 'app.py', 'print(2)\n');
    writeFileSync(path.join(ws, 'app.py'), 'print(1)\n');
    await fileWrite(ws, 'app.py', 'print(3)\n');
    assert.ok(commitCount(hk.shadowDir(ws)) >= 1, 'checkpoints were committed');
    const afterState = state();
    assert.deepEqual({ ...afterState, status: '' }, { ...before, status: '' });
    assert.equal(afterState.status, ' M app.py\n', "the user's index still holds their own version");
    assert.ok(!existsSync(path.join(ws, 'HOOK_RAN')), 'no hook of the user ran');
    assert.ok(!('.git' in headFiles(hk.shadowDir(ws))));
  });
});

describe('paths git cannot take', () => {
  test('a file behind a symlinked folder is left out without holding back the others', async () => {
    const ws = workspace();
    const outside = workspace();
    writeFileSync(path.join(outside, 'x.txt'), 'outside the workspace');
    symlinkSync(outside, path.join(ws, 'link'));
    writeFileSync(path.join(ws, 'ok.txt'), 'ok');
    const warned = warnings('checkpoint snapshot failed').length;
    await hk.beforeTool(
      'apply_patch',
      { patch: '*** Begin Patch\n*** Update File: link/x.txt\n@@\n-a\n+b\n*** Update File: ok.txt\n@@\n-a\n+b\n*** End Patch' },
      ws,
    );
    assert.equal(warnings('checkpoint snapshot failed').length, warned);
    assert.deepEqual(headFiles(hk.shadowDir(ws)), { 'ok.txt': 'ok' });
    assert.ok(hk.logs.some((l) => l.msg === 'path not checkpointed: git cannot process it' && l.path === 'link/x.txt'));
  });
});

describe('failures never block the tool', () => {
  test('a broken checkpoints folder: warning, the tool proceeds, the next call retries the pending paths', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    const root = path.dirname(shadow);
    writeFileSync(path.join(ws, 'pending.txt'), 'before the failed snapshot');
    chmodSync(root, 0o555);
    // chmod does not bind root (uid 0): then occupy the repository's path with a plain file instead.
    let blocker = false;
    try {
      writeFileSync(path.join(root, 'probe'), '');
      unlinkSync(path.join(root, 'probe'));
      writeFileSync(shadow, 'not a directory');
      blocker = true;
    } catch {
      // read-only for this user: the chmod alone breaks it
    }
    const warned = warnings('checkpoint snapshot failed').length;
    try {
      await fileWrite(ws, 'pending.txt', 'written while checkpoints were broken');
    } finally {
      chmodSync(root, 0o755);
      if (blocker) unlinkSync(shadow);
    }
    assert.equal(warnings('checkpoint snapshot failed').length, warned + 1, 'a warning was logged');
    assert.equal(readFileSync(path.join(ws, 'pending.txt'), 'utf8'), 'written while checkpoints were broken', 'the tool proceeded');
    writeFileSync(path.join(ws, 'next.txt'), 'next before');
    await fileWrite(ws, 'next.txt', 'next after');
    assert.deepEqual(
      headFiles(shadow),
      { 'next.txt': 'next before', 'pending.txt': 'written while checkpoints were broken' },
      'the pending path was picked up',
    );
  });

  test('a snapshot past its deadline: warning, git killed, the tool proceeds at once; the next call retries', async () => {
    const ws = workspace();
    const shadow = hk.shadowDir(ws);
    writeFileSync(path.join(ws, 'slow.txt'), 'v1');
    await setConfig(hk.k, 'checkpoints.snapshot_timeout_ms', 1);
    let ms: number;
    try {
      ms = await fileWrite(ws, 'slow.txt', 'v2');
    } finally {
      await setConfig(hk.k, 'checkpoints.snapshot_timeout_ms', 10000);
    }
    assert.ok(ms < 1000, `the hook returned after ${ms} ms`);
    assert.ok(warnings('checkpoint snapshot timed out').length >= 1);
    await fileWrite(ws, 'slow.txt', 'v3');
    assert.deepEqual(headFiles(shadow), { 'slow.txt': 'v2' });
  });

  test('snapshots of one directory are serialised; different directories run side by side', async () => {
    const wsA = workspace();
    const wsB = workspace();
    const names = Array.from({ length: 6 }, (_, i) => `f${i}.txt`);
    for (const ws of [wsA, wsB]) for (const name of names) writeFileSync(path.join(ws, name), `${name} v1`);
    const warned = hk.logs.filter((l) => l.level === 40).length;
    await Promise.all([wsA, wsB].flatMap((ws) => names.map((name) => hk.beforeTool('file_write', { path: name, content: 'v2' }, ws))));
    assert.equal(hk.logs.filter((l) => l.level === 40).length, warned, 'no lock conflict, no warning');
    for (const ws of [wsA, wsB]) {
      assert.deepEqual(Object.keys(headFiles(hk.shadowDir(ws))).sort(), names);
    }
  });
});
