import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { canonicalDir, shadowName } from '../services/shadow.ts';
import { groupTargets, isExcluded, toolPaths } from '../services/targets.ts';
import { checkpointMessage, pathPreview } from '../services/message.ts';
import { tempDir } from './support.ts';

const scratch = tempDir('talon-ckpt-unit-');
after(() => rmSync(scratch, { recursive: true, force: true }));

test('shadow folder name: first 16 hex chars of SHA-256 of the UTF-8 path', () => {
  // printf '%s' /home/user/project | sha256sum
  assert.equal(shadowName('/home/user/project'), '9dad1e4e08b0b11c');
  assert.equal(shadowName('/tmp/ünïcode dir'), 'cf4a0842c1daf8ed');
  assert.equal(canonicalDir('/no/such/dir/'), '/no/such/dir');
  assert.equal(canonicalDir('/no/such/dir/sub/..'), '/no/such/dir');
  mkdirSync(path.join(scratch, 'real'));
  symlinkSync(path.join(scratch, 'real'), path.join(scratch, 'link'));
  assert.equal(canonicalDir(path.join(scratch, 'link') + '/'), path.join(scratch, 'real'));
});

test('target paths: file_write names its path, apply_patch what the patch parser reads', () => {
  const parser = (patch: string) => patch.split(',');
  assert.deepEqual(toolPaths('apply_patch', { patch: 'a.txt,b/c.txt' }, parser), ['a.txt', 'b/c.txt']);
  assert.deepEqual(toolPaths('apply_patch', { patch: 42 }, parser), []);
  assert.deepEqual(toolPaths('file_write', { path: 'x.txt', content: 'y' }, parser), ['x.txt']);
  assert.deepEqual(toolPaths('file_write', { content: 'y' }, parser), []);
  assert.deepEqual(toolPaths('file_read', { path: 'x.txt' }, parser), []);
});

test('working directory rule: the workspace, or the folder holding an absolute target outside it', () => {
  const ws = path.join(scratch, 'ws');
  mkdirSync(ws);
  assert.deepEqual(groupTargets(ws, ['a.txt', './src/b.ts', path.join(ws, 'c.txt'), 'a.txt', '/etc/talon/x.conf', '../escape.txt', ws]), [
    { workDir: ws, paths: ['a.txt', 'src/b.ts', 'c.txt'] },
    { workDir: '/etc/talon', paths: ['x.conf'] },
  ]);
  // The workspace spelled through a symlink resolves to one repository.
  symlinkSync(ws, path.join(scratch, 'ws-link'));
  assert.deepEqual(groupTargets(path.join(scratch, 'ws-link'), [path.join(scratch, 'ws-link', 'd.txt'), 'e.txt']), [
    { workDir: ws, paths: ['d.txt', 'e.txt'] },
  ]);
});

test('exclusions: the nine folders anywhere in the path, never a mere file name', () => {
  for (const dir of ['node_modules', 'target', '.venv', 'venv', 'env', '.git', '__pycache__', 'dist', 'build']) {
    assert.ok(isExcluded(`${dir}/x`), dir);
    assert.ok(isExcluded(`a/b/${dir}/c/x.py`), dir);
    if (dir !== '.git') assert.ok(!isExcluded(dir), `a file named ${dir}`);
    assert.ok(!isExcluded(`${dir}x/y`), `${dir}x is another folder`);
  }
  assert.ok(isExcluded('sub/.git'), 'git refuses a file named .git too');
  const ws = path.join(scratch, 'ws2');
  mkdirSync(ws);
  assert.deepEqual(groupTargets(ws, ['node_modules/pkg/index.js', 'src/dist/out.js', '/srv/app/build/x.js', '/srv/app/src/y.js']), [
    { workDir: '/srv/app/src', paths: ['y.js'] },
  ]);
});

test('commit message: subject plus Agent-Id, Session-Id, Tool and Path trailers; a one-line, truncated path preview', () => {
  assert.equal(
    checkpointMessage({ tool: 'file_write', agentId: 'agent-1', sessionId: 'session-1', paths: ['src/app.ts'] }),
    'checkpoint: file_write src/app.ts\n\nAgent-Id: agent-1\nSession-Id: session-1\nTool: file_write\nPath: src/app.ts\n',
  );
  assert.equal(pathPreview(['a.txt', 'b.txt', 'c.txt']), 'a.txt (+2 more)');
  const long = `${'d/'.repeat(80)}file.ts`;
  const preview = pathPreview([long]);
  assert.equal(preview.length, 100);
  assert.ok(preview.startsWith('…') && preview.endsWith('/file.ts'));
  assert.equal(pathPreview(['evil\nTool: x\r.txt']), 'evil?Tool: x?.txt');
  assert.ok(!checkpointMessage({ tool: 'file_write', paths: ['a\nb'] }).includes('a\nb'));
});
