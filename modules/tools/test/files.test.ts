import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileReadTool } from '../tools/file-read.ts';
import { fileWriteTool } from '../tools/file-write.ts';
import { fileListTool } from '../tools/file-list.ts';
import { agentRecord, fakeDeps, tempDir, toolCtx } from './helpers.ts';

describe('file tools', () => {
  const ws = tempDir();
  const outside = tempDir('talon-outside-');
  const deps = fakeDeps();
  const read = fileReadTool(deps);
  const write = fileWriteTool(deps);
  const list = fileListTool(deps);
  const ctx = toolCtx(agentRecord({ workspace: ws.dir }));

  before(() => {
    writeFileSync(path.join(outside.dir, 'secret.txt'), 'top secret');
    symlinkSync(outside.dir, path.join(ws.dir, 'escape'));
    symlinkSync(path.join(outside.dir, 'secret.txt'), path.join(ws.dir, 'secret-link'));
  });
  after(() => {
    ws.cleanup();
    outside.cleanup();
  });

  it('file_write creates parent folders, writes atomically and reports the bytes', async () => {
    const out = await write.execute({ path: 'a/b/c.txt', content: 'héllo' }, ctx);
    const target = path.join(ws.dir, 'a/b/c.txt');
    assert.equal(out.isError, false);
    assert.match(out.content, /^Successfully wrote 6 bytes to .*a\/b\/c\.txt$/);
    assert.equal(readFileSync(target, 'utf8'), 'héllo');
    assert.deepEqual(readdirSync(path.join(ws.dir, 'a/b')), ['c.txt'], 'no temp file left behind');
  });

  it('file_read returns the content; missing files and directories are error results', async () => {
    assert.deepEqual(await read.execute({ path: 'a/b/c.txt' }, ctx), { content: 'héllo', isError: false });
    const missing = await read.execute({ path: 'nope.txt' }, ctx);
    assert.equal(missing.isError, true);
    assert.match(missing.content, /File not found: nope\.txt/);
    assert.equal((await read.execute({ path: 'a' }, ctx)).isError, true);
  });

  it('file_read refuses files above max_bytes and non-UTF-8 content', async () => {
    writeFileSync(path.join(ws.dir, 'big.txt'), 'x'.repeat(100));
    const big = await read.execute({ path: 'big.txt', max_bytes: 10 }, ctx);
    assert.equal(big.isError, true);
    assert.match(big.content, /larger than max_bytes/);
    writeFileSync(path.join(ws.dir, 'bin.dat'), Buffer.from([0xff, 0xfe, 0x00]));
    const bin = await read.execute({ path: 'bin.dat' }, ctx);
    assert.equal(bin.isError, true);
    assert.match(bin.content, /not valid UTF-8/);
  });

  it('absolute paths are accepted inside the workspace only', async () => {
    const inside = await read.execute({ path: path.join(ws.dir, 'a/b/c.txt') }, ctx);
    assert.equal(inside.content, 'héllo');
    const out = await read.execute({ path: path.join(outside.dir, 'secret.txt') }, ctx);
    assert.equal(out.isError, true);
    assert.match(out.content, /outside the agent workspace/);
    const etc = await write.execute({ path: '/etc/talon-test', content: 'x' }, ctx);
    assert.equal(etc.isError, true);
  });

  it('refuses .. traversal and symlink escapes for reads, writes and listings', async () => {
    for (const p of ['../x.txt', 'a/../../x.txt']) {
      const r = await read.execute({ path: p }, ctx);
      assert.equal(r.isError, true, p);
      assert.match(r.content, /must not contain '\.\.'/);
    }
    const viaDir = await read.execute({ path: 'escape/secret.txt' }, ctx);
    assert.equal(viaDir.isError, true);
    assert.match(viaDir.content, /symlink/);
    assert.equal((await read.execute({ path: 'secret-link' }, ctx)).isError, true);
    const w = await write.execute({ path: 'escape/new.txt', content: 'x' }, ctx);
    assert.equal(w.isError, true);
    assert.deepEqual(readdirSync(outside.dir), ['secret.txt']);
    assert.equal((await list.execute({ path: 'escape' }, ctx)).isError, true);
  });

  it('file_list sorts entries, marks folders and paginates with a footer', async () => {
    const dir = path.join(ws.dir, 'listing');
    mkdirSync(path.join(dir, 'sub'), { recursive: true });
    for (const n of ['b.txt', 'a.txt', 'c.txt']) writeFileSync(path.join(dir, n), n);
    assert.equal((await list.execute({ path: 'listing' }, ctx)).content, 'a.txt\nb.txt\nc.txt\nsub/');
    const page = await list.execute({ path: 'listing', limit: 2, offset: 1 }, ctx);
    assert.equal(page.content, 'b.txt\nc.txt\n--- showing 2 of 4 entries (offset: 1) ---');
    const root = await list.execute({ path: '.' }, ctx);
    assert.match(root.content, /^a\/$/m);
  });

  it('file_list without a path hints at {"path": "."}; a missing folder is an error result', async () => {
    const none = await list.execute({}, ctx);
    assert.equal(none.isError, true);
    assert.match(none.content, /\{"path": "\."\}/);
    const missing = await list.execute({ path: 'nowhere' }, ctx);
    assert.equal(missing.isError, true);
    assert.match(missing.content, /Directory not found/);
  });

  it('tools without a workspace refuse with an error result', async () => {
    const noWs = toolCtx(agentRecord());
    const r = await read.execute({ path: 'x' }, noWs);
    assert.equal(r.isError, true);
    assert.match(r.content, /workspace/);
  });
});
