import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyPatchTool } from '../tools/apply-patch.ts';
import { applyHunks, parsePatch } from '../services/patch.ts';
import { patchPaths } from '../services/patch-paths.ts';
import { agentRecord, fakeDeps, tempDir, toolCtx } from './helpers.ts';

const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

describe('apply_patch parsing', () => {
  it('parses add, update with move, delete and hunk context', () => {
    const ops = parsePatch(
      patch(
        '*** Add File: new.txt',
        '+one',
        '+two',
        '*** Update File: a.txt -> b.txt',
        '@@ fn main',
        ' keep',
        '-old',
        '+new',
        ' after',
        '*** Delete File: gone.txt',
      ),
    );
    assert.deepEqual(ops, [
      { kind: 'add', path: 'new.txt', content: 'one\ntwo' },
      { kind: 'update', path: 'a.txt', moveTo: 'b.txt', hunks: [{ contextBefore: ['keep'], oldLines: ['old'], newLines: ['new'], contextAfter: ['after'] }] },
      { kind: 'delete', path: 'gone.txt' },
    ]);
  });

  it('the tools.patch service names every path: Add, Update (with -> move), Move to, Delete; none for a broken patch', () => {
    const text = [
      '*** Begin Patch',
      '*** Add File: src/new.ts',
      '+*** Delete File: not-a-header.txt',
      '*** Update File: src/app.ts',
      '@@ context',
      '-old',
      '+new',
      '   *** Update File: a b.txt -> dir/c d.txt   ',
      '@@',
      '-x',
      '+y',
      '*** Update File: m.ts',
      '*** Move to: n.ts',
      '@@',
      '-x',
      '+y',
      '*** Delete File: gone.md',
      '*** End Patch',
    ].join('\r\n');
    assert.deepEqual(patchPaths.paths(text), ['src/new.ts', 'src/app.ts', 'a b.txt', 'dir/c d.txt', 'm.ts', 'n.ts', 'gone.md']);
    assert.deepEqual(patchPaths.paths('*** Add File: x\n+y'), []);
  });

  it('names the missing markers and other format errors in the reference words', () => {
    assert.throws(() => parsePatch('*** Add File: x\n+y\n*** End Patch'), /^PatchError: Missing '\*\*\* Begin Patch' marker$/);
    assert.throws(() => parsePatch('*** Begin Patch\n*** Add File: x\n+y'), /Missing '\*\*\* End Patch' marker/);
    assert.throws(() => parsePatch(patch('*** Add File: x', 'no plus')), /Expected '\+' prefix in Add File content, got: no plus/);
    assert.throws(() => parsePatch(patch('*** Update File: x')), /Update File 'x' has no hunks/);
    assert.throws(() => parsePatch(patch('*** Add File:   ')), /Empty path in Add File/);
    assert.throws(() => parsePatch(patch('garbage')), /Unexpected line in patch: garbage/);
    assert.throws(() => parsePatch(patch('')), /Patch contains no operations/);
  });

  it('anchors on context + old lines, tolerates trailing whitespace, keeps the trailing newline', () => {
    const hunk = { contextBefore: ['b'], oldLines: ['c  '], newLines: ['C'], contextAfter: [] };
    assert.equal(applyHunks('a\nb\nc\nd\n', [hunk]), 'a\nb\nC\nd\n');
    assert.equal(applyHunks('x', [{ contextBefore: [], oldLines: [], newLines: ['y'], contextAfter: [] }]), 'x\ny');
    assert.throws(() => applyHunks('a\n', [hunk]), /Hunk 1 failed: could not find context\/old lines in file/);
  });

  it('a change separated by context within one hunk keeps the middle lines', () => {
    const [op] = parsePatch(patch('*** Update File: f', '@@', ' 1', '-2', ' 3', '-4', '+four'));
    assert.ok(op.kind === 'update');
    assert.equal(applyHunks('1\n2\n3\n4\n5\n', op.hunks), '1\n3\nfour\n5\n');
  });
});

describe('apply_patch tool', () => {
  const ws = tempDir();
  after(() => ws.cleanup());
  const tool = applyPatchTool(fakeDeps());
  const ctx = toolCtx(agentRecord({ workspace: ws.dir }));
  const file = (p: string) => path.join(ws.dir, p);

  it('adds a file (no trailing newline) in new folders', async () => {
    const out = await tool.execute({ patch: patch('*** Add File: src/hello.txt', '+hello', '+world') }, ctx);
    assert.deepEqual(out, { content: '1 added', isError: false });
    assert.equal(readFileSync(file('src/hello.txt'), 'utf8'), 'hello\nworld');
  });

  it('updates with context across two hunks', async () => {
    writeFileSync(file('code.py'), 'def a():\n    return 1\n\ndef b():\n    return 2\n');
    const out = await tool.execute(
      {
        patch: patch(
          '*** Update File: code.py',
          '@@ def a',
          ' def a():',
          '-    return 1',
          '+    return 10',
          '@@ def b',
          ' def b():',
          '-    return 2',
          '+    return 20',
        ),
      },
      ctx,
    );
    assert.deepEqual(out, { content: '1 updated', isError: false });
    assert.equal(readFileSync(file('code.py'), 'utf8'), 'def a():\n    return 10\n\ndef b():\n    return 20\n');
  });

  it('moves a file while updating it, and deletes files', async () => {
    writeFileSync(file('old.txt'), 'x\ny\n');
    writeFileSync(file('trash.txt'), 'bye');
    const out = await tool.execute({ patch: patch('*** Update File: old.txt -> moved/new.txt', '@@', '-y', '+z', '*** Delete File: trash.txt') }, ctx);
    assert.deepEqual(out, { content: '1 deleted, 1 moved', isError: false });
    assert.equal(existsSync(file('old.txt')), false);
    assert.equal(readFileSync(file('moved/new.txt'), 'utf8'), 'x\nz\n');
    assert.equal(existsSync(file('trash.txt')), false);
  });

  it('a failing hunk leaves that file unchanged and reports a partial application', async () => {
    writeFileSync(file('keep.txt'), 'alpha\n');
    const out = await tool.execute({ patch: patch('*** Add File: extra.txt', '+e', '*** Update File: keep.txt', '@@', '-beta', '+gamma') }, ctx);
    assert.equal(out.isError, true);
    assert.equal(out.content, "Patch partially applied: 1 added. Errors: Update File 'keep.txt': Hunk 1 failed: could not find context/old lines in file");
    assert.equal(readFileSync(file('keep.txt'), 'utf8'), 'alpha\n');
  });

  it('missing markers, missing files and escaping paths are error results', async () => {
    const noBegin = await tool.execute({ patch: '*** Add File: a\n+b\n*** End Patch' }, ctx);
    assert.deepEqual(noBegin, { content: "Missing '*** Begin Patch' marker", isError: true });
    const noEnd = await tool.execute({ patch: '*** Begin Patch\n*** Add File: a\n+b' }, ctx);
    assert.deepEqual(noEnd, { content: "Missing '*** End Patch' marker", isError: true });
    const missing = await tool.execute({ patch: patch('*** Delete File: nope.txt') }, ctx);
    assert.equal(missing.isError, true);
    assert.match(missing.content, /No changes applied\. Errors: Delete File 'nope\.txt': file not found/);
    const escape = await tool.execute({ patch: patch('*** Add File: ../evil.txt', '+x') }, ctx);
    assert.equal(escape.isError, true);
    assert.equal(existsSync(path.join(ws.dir, '..', 'evil.txt')), false);
  });
});
