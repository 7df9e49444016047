import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AGENT_ID, SESSION_ID, git, startHookKernel, tempDir, type HookKernel } from './support.ts';
import type { CheckpointEntry } from '../services/message.ts';

let hk: HookKernel;
const made: string[] = [];

before(async () => {
  hk = await startHookKernel(['error-envelope']);
});
after(async () => {
  await hk.stop();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function workspace(): string {
  const dir = tempDir('talon-ckpt-rs-');
  made.push(dir);
  return dir;
}

async function fileWrite(ws: string, target: string, content: string): Promise<void> {
  await hk.beforeTool('file_write', { path: target, content }, ws);
  mkdirSync(path.dirname(path.join(ws, target)), { recursive: true });
  writeFileSync(path.join(ws, target), content);
}

const restore = (body: unknown) => hk.k.request('/api/checkpoints/restore', { method: 'POST', json: body });
const list = (query: string) => hk.k.request(`/api/checkpoints${query}`);
const read = (ws: string, name: string) => readFileSync(path.join(ws, name), 'utf8');

type Entry = CheckpointEntry;

/** A workspace holding a.txt = A3 with three checkpoints: c1 = {a: A1}, c2 = {a: A1, lib/b: B1}, c3 = {a: A2, lib/b: B1}. */
async function history(): Promise<{ ws: string; c1: string; c2: string; c3: string; shadow: string }> {
  const ws = workspace();
  await fileWrite(ws, 'a.txt', 'A1');
  await fileWrite(ws, 'lib/b.txt', 'B1');
  await fileWrite(ws, 'a.txt', 'A2');
  await fileWrite(ws, 'a.txt', 'A3');
  const shadow = hk.shadowDir(ws);
  const [c3, c2, c1] = git(shadow, ['log', '--format=%H']).trim().split('\n');
  return { ws, c1, c2, c3, shadow };
}

describe('POST /api/checkpoints/restore', () => {
  test('overwrites changed files, brings back deleted ones, leaves later files alone; safety snapshot first', async () => {
    const { ws, c3: c2, shadow } = await history();
    assert.equal(read(ws, 'a.txt'), 'A3');
    unlinkSync(path.join(ws, 'lib/b.txt'));
    writeFileSync(path.join(ws, 'later.txt'), 'created after the checkpoint');
    const res = await restore({ working_dir: ws, commit: c2 });
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { status: string; working_dir: string; commit: string; restored: string[]; safety_snapshot: string | null };
    assert.equal(body.status, 'restored');
    assert.equal(body.working_dir, ws);
    assert.equal(body.commit, c2);
    assert.deepEqual(body.restored.sort(), ['a.txt', 'lib/b.txt']);
    assert.equal(read(ws, 'a.txt'), 'A2');
    assert.equal(read(ws, 'lib/b.txt'), 'B1');
    assert.equal(read(ws, 'later.txt'), 'created after the checkpoint');
    // The safety snapshot holds the state just before the restore (A3, b deleted) and can itself be restored.
    assert.match(body.safety_snapshot ?? '', /^[0-9a-f]{40}$/);
    const safety = body.safety_snapshot!;
    assert.equal(git(shadow, ['show', `${safety}:a.txt`]), 'A3');
    assert.throws(() => git(shadow, ['cat-file', '-e', `${safety}:lib/b.txt`]));
    assert.match(
      git(shadow, ['log', '-1', '--format=%B', safety]),
      new RegExp(`^checkpoint: before restore of ${c2.slice(0, 12)}\\n\\nTool: restore\\nPath: a.txt \\(\\+1 more\\)\\nRestore-Of: ${c2}\\n`),
    );
    const back = (await (await restore({ working_dir: ws, commit: safety })).json()) as { restored: string[] };
    assert.deepEqual(back.restored, ['a.txt']);
    assert.equal(read(ws, 'a.txt'), 'A3');
  });

  test('abbreviated ids (4 to 40 hex, any case) restore; the reply gives the full id; a state equal to the last checkpoint needs no safety snapshot', async () => {
    const { ws, c1 } = await history();
    const first = await restore({ working_dir: ws, commit: c1.slice(0, 7) });
    assert.equal(first.status, 200);
    const body = (await first.json()) as { commit: string; restored: string[]; safety_snapshot: string | null };
    assert.equal(body.commit, c1);
    assert.deepEqual(body.restored, ['a.txt']);
    assert.equal(read(ws, 'a.txt'), 'A1');
    // The restored state (A1) is not the newest checkpoint yet: the next restore's safety snapshot records it...
    const again = (await (await restore({ working_dir: ws, commit: c1.toUpperCase() })).json()) as { safety_snapshot: string | null };
    assert.match(again.safety_snapshot ?? '', /^[0-9a-f]{40}$/);
    // ...after which nothing changed: no new commit.
    const third = (await (await restore({ working_dir: ws, commit: c1 })).json()) as { safety_snapshot: string | null };
    assert.equal(third.safety_snapshot, null);
    // A trailing slash or a '..' spelling names the same working directory.
    assert.equal((await restore({ working_dir: `${ws}/`, commit: c1.slice(0, 4) })).status, 200);
    assert.equal((await restore({ working_dir: `${ws}/lib/..`, commit: c1 })).status, 200);
  });

  test('bad input: 400 naming the problem, nothing reaches git as an option', async () => {
    const { ws, c1 } = await history();
    const cases: Array<[unknown, RegExp]> = [
      [{ working_dir: 'relative/dir', commit: c1 }, /absolute/],
      [{ commit: c1 }, /working_dir/],
      [{ working_dir: ws }, /commit/],
      [{}, /working_dir|commit/],
      [{ working_dir: 42, commit: c1 }, /working_dir/],
      [{ working_dir: ws, commit: 1234567 }, /commit/],
      [{ working_dir: ws, commit: ['abcd'] }, /commit/],
      [{ working_dir: ws, commit: '--output=/tmp/talon-pwned' }, /commit/],
      [{ working_dir: ws, commit: '-p' }, /commit/],
      [{ working_dir: ws, commit: 'xyz12345' }, /commit/],
      [{ working_dir: ws, commit: 'abc' }, /commit/],
      [{ working_dir: ws, commit: 'a'.repeat(41) }, /commit/],
      [{ working_dir: ws, commit: 'HEAD' }, /commit/],
      [{ working_dir: ws, commit: `${c1.slice(0, 8)}..HEAD` }, /commit/],
      [{ working_dir: '', commit: c1 }, /working_dir/],
    ];
    for (const [body, why] of cases) {
      const res = await restore(body);
      const reply = (await res.json()) as { error: string };
      assert.equal(res.status, 400, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(reply)}`);
      assert.deepEqual(Object.keys(reply), ['error']);
      assert.match(reply.error, why, JSON.stringify(body));
    }
    assert.ok(!existsSync('/tmp/talon-pwned'));
    assert.equal(read(ws, 'a.txt'), 'A3', 'nothing was restored');
  });

  test('404 for a directory without checkpoints and for an unknown commit', async () => {
    const { ws } = await history();
    const empty = workspace();
    const noRepo = await restore({ working_dir: empty, commit: 'abcdef1' });
    assert.equal(noRepo.status, 404);
    assert.match(((await noRepo.json()) as { error: string }).error, /no checkpoints for working directory/);
    assert.equal((await restore({ working_dir: path.join(empty, 'missing'), commit: 'abcdef1' })).status, 404);
    const noCommit = await restore({ working_dir: ws, commit: 'deadbeefdeadbeef' });
    assert.equal(noCommit.status, 404);
    assert.match(((await noCommit.json()) as { error: string }).error, /no checkpoint 'deadbeefdeadbeef'/);
    // A tree or blob id is no checkpoint either.
    const tree = git(hk.shadowDir(ws), ['rev-parse', 'HEAD^{tree}']).trim();
    assert.equal((await restore({ working_dir: ws, commit: tree })).status, 404);
  });
});

describe('GET /api/checkpoints', () => {
  test('lists checkpoints newest first with their parsed trailers; limit and offset page', async () => {
    const { ws, c1, c2, c3 } = await history();
    const res = await list(`?working_dir=${encodeURIComponent(ws)}`);
    assert.equal(res.status, 200);
    const entries = (await res.json()) as Entry[];
    assert.deepEqual(
      entries.map((e) => e.commit),
      [c3, c2, c1],
    );
    assert.deepEqual(
      { ...entries[2], timestamp: undefined },
      {
        commit: c1,
        short: c1.slice(0, entries[2].short.length),
        message: 'checkpoint: file_write lib/b.txt',
        agent_id: AGENT_ID,
        session_id: SESSION_ID,
        tool: 'file_write',
        path: 'lib/b.txt',
        timestamp: undefined,
      },
    );
    assert.equal(entries[0].path, 'a.txt');
    assert.ok(Math.abs(Date.parse(entries[0].timestamp) - Date.now()) < 60_000);
    const page = (await (await list(`?working_dir=${encodeURIComponent(ws)}&limit=1&offset=1`)).json()) as Entry[];
    assert.deepEqual(
      page.map((e) => e.commit),
      [c2],
    );
  });

  test('a repository without commits lists nothing; 400 and 404 like restore', async () => {
    const ws = workspace();
    await fileWrite(ws, 'new.txt', 'first version: no commit yet');
    assert.deepEqual(await (await list(`?working_dir=${encodeURIComponent(ws)}`)).json(), []);
    assert.equal((await list('')).status, 400);
    assert.equal((await list('?working_dir=relative')).status, 400);
    assert.equal((await list(`?working_dir=${encodeURIComponent(ws)}&limit=-1`)).status, 400);
    assert.equal((await list(`?working_dir=${encodeURIComponent(workspace())}`)).status, 404);
  });
});
