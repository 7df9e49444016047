/**
 * GET /api/uploads/{file_id} (Range, ETag, nosniff, Content-Disposition, no active content inline, the API's auth),
 * sniffing on POST /api/agents/{id}/upload, and the files a turn's tools made on its reply and in its session.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { StoredFile, UploadFiles } from '@talon/agents';
import { waitFor } from '@talon/testing';
import { contentDisposition } from '../routes/serve-upload.ts';
import { json, postUpload, readSse, spawn, startEnv, stopEnv, type Env } from './helpers.ts';
import { MP4, PNG } from './media-bytes.ts';

const KEY = 'uploads-key-0123456789';

describe('serving stored files', () => {
  let env: Env;
  let files: UploadFiles;
  let video: StoredFile;
  before(async () => {
    env = await startEnv({ modules: ['file-tools'] });
    files = env.k.kernel.services.view<UploadFiles>('agents.uploads');
    video = await files.saveGenerated({ kind: 'video', bytes: MP4, name: 'clip', source: { provider: 'test', model: 'm' } });
  });
  after(() => stopEnv(env));

  const get = (id: string, headers: Record<string, string> = {}, method = 'GET') => env.k.request(`/api/uploads/${id}`, { method, headers });
  const etag = `"${createHash('sha256').update(MP4).digest('hex')}"`;

  test('the whole file: streamed with its length, a strong ETag, nosniff, private caching, inline for a video', async () => {
    const res = await get(video.file_id);
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(MP4));
    assert.equal(res.headers.get('content-type'), 'video/mp4');
    assert.equal(res.headers.get('content-length'), String(MP4.length));
    assert.equal(res.headers.get('etag'), etag);
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(res.headers.get('cache-control')!, /^private, max-age=\d+/);
    assert.equal(res.headers.get('content-disposition'), `inline; filename="clip.mp4"; filename*=UTF-8''clip.mp4`);
    const head = await get(video.file_id, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(MP4.length));
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  });

  test('one range is a 206 with Content-Range (first-last, suffix, open-ended)', async () => {
    const cases: Array<[string, number, number]> = [
      ['bytes=0-3', 0, 3],
      ['bytes=-5', MP4.length - 5, MP4.length - 1],
      ['bytes=100-', 100, MP4.length - 1],
      ['bytes=10-999999999', 10, MP4.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get(video.file_id, { range });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${MP4.length}`, range);
      assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(MP4.subarray(start, end + 1)), range);
    }
  });

  test('an unsatisfiable range is 416 with bytes */size; a malformed one, another unit or several ranges get the whole file', async () => {
    const res = await get(video.file_id, { range: `bytes=${MP4.length}-` });
    assert.equal(res.status, 416);
    assert.equal(res.headers.get('content-range'), `bytes */${MP4.length}`);
    assert.match(((await res.json()) as { error: string }).error, /Range/);
    assert.equal((await get(video.file_id, { range: 'bytes=-0' })).status, 416, 'a zero-length suffix is satisfied by no byte');
    for (const range of ['bytes=abc', 'bytes=5-2', 'bytes=1-2,x', 'items=0-1', 'bytes=0-1,5-6']) {
      const whole = await get(video.file_id, { range });
      assert.equal(whole.status, 200, range);
      assert.equal((await whole.arrayBuffer()).byteLength, MP4.length, range);
    }
  });

  test('If-None-Match with the ETag (or a list holding it, or *) is a 304; If-Range honours the ETag only', async () => {
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get(video.file_id, { 'if-none-match': tag });
      assert.equal(res.status, 304, tag);
      assert.equal(res.headers.get('etag'), etag);
      assert.equal((await res.arrayBuffer()).byteLength, 0);
    }
    assert.equal((await get(video.file_id, { 'if-none-match': '"other"' })).status, 200);
    assert.equal((await get(video.file_id, { range: 'bytes=0-0', 'if-range': etag })).status, 206);
    assert.equal((await get(video.file_id, { range: 'bytes=0-0', 'if-range': '"stale"' })).status, 200);
  });

  test("uploads are sniffed: a PNG labelled text/html is an inline image/png; HTML stays a download; the name's unicode in filename*", async () => {
    const agent = await spawn(env.k, 'sniffer');
    const png = await json<{ file_id: string; content_type: string }>(await postUpload(env.k, agent.agent_id, 'pic.html', 'text/html', PNG));
    assert.equal(png.content_type, 'image/png');
    const served = await get(png.file_id);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.match(served.headers.get('content-disposition')!, /^inline;/);
    const html = await json<{ file_id: string; content_type: string }>(
      await postUpload(env.k, agent.agent_id, 'résumé €.html', 'text/html', '<html><script>alert(1)</script></html>'),
    );
    assert.equal(html.content_type, 'application/octet-stream');
    const page = await get(html.file_id);
    assert.equal(page.headers.get('content-type'), 'application/octet-stream');
    assert.equal(page.headers.get('content-disposition'), `attachment; filename="r_sum_ _.html"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%82%AC.html`);
    const text = await json<{ file_id: string }>(await postUpload(env.k, agent.agent_id, 'notes.txt', 'text/plain', 'hi'));
    assert.match((await get(text.file_id)).headers.get('content-disposition')!, /^attachment;/, 'only images, audio and video are inline');
  });

  test('Content-Disposition: quotes, backslashes and non-ASCII are replaced in filename and kept exactly in filename*', () => {
    assert.equal(contentDisposition('attachment', 'a "b"\\c ü.txt'), `attachment; filename="a _b__c _.txt"; filename*=UTF-8''a%20%22b%22%5Cc%20%C3%BC.txt`);
    assert.equal(contentDisposition('inline', "it's (1)*.png"), `inline; filename="it's (1)*.png"; filename*=UTF-8''it%27s%20%281%29%2A.png`);
  });

  test('a stored text/html or image/svg+xml (a row from before sniffing) is never served as such, nor inline', async () => {
    for (const [type, body] of [
      ['text/html', '<script>alert(1)</script>'],
      ['image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
    ]) {
      const id = randomUUID();
      // As an old row has it: the file in the uploads folder, the row naming its full path.
      const folder = path.join(env.k.home, 'data', 'agents', 'uploads');
      mkdirSync(folder, { recursive: true });
      const file = path.join(folder, `legacy-${id}`);
      writeFileSync(file, body);
      await env.k.kernel.store.run(
        'INSERT INTO agents_uploads (id, agent_id, filename, content_type, size, path, created_at) VALUES (?, NULL, ?, ?, ?, ?, ?)',
        [id, 'x.svg', type, body.length, file, Date.now()],
      );
      const res = await get(id);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/octet-stream', type);
      assert.match(res.headers.get('content-disposition')!, /^attachment;/, type);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      rmSync(file);
      assert.equal((await get(id)).status, 404, 'a row whose bytes are gone is a 404');
    }
  });

  test("the files a turn's tools made come with the reply, on the SSE done event, and on the session's last message", async () => {
    const { agent_id } = await spawn(env.k, 'painter');
    env.fake.enqueue({ toolCalls: [{ name: 'make_image', input: { name: 'sunset' } }] }, { text: 'Here it is.' });
    const reply = await json<{ response: string; files: StoredFile[] }>(
      await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'paint' } }),
    );
    assert.equal(reply.response, 'Here it is.');
    assert.equal(reply.files.length, 1);
    const [file] = reply.files;
    assert.deepEqual(
      { ...file, file_id: '' },
      { file_id: '', url: `/api/uploads/${file.file_id}`, content_type: 'image/png', filename: 'sunset.png', size: PNG.length },
    );
    assert.ok(Buffer.from(await (await get(file.file_id)).arrayBuffer()).equals(PNG));
    const session = await json<{ messages: Array<{ role: string; content: string; files?: StoredFile[] }> }>(
      await env.k.request(`/api/agents/${agent_id}/session`),
    );
    assert.deepEqual(session.messages.at(-1), { ...session.messages.at(-1), role: 'Assistant', content: 'Here it is.', files: [file] });
    assert.equal(session.messages.filter((m) => m.files).length, 1, 'only the last message carries them');

    env.fake.enqueue(
      {
        toolCalls: [
          { name: 'make_image', input: { name: 'a' } },
          { name: 'make_image', input: { name: 'b' } },
        ],
      },
      { text: 'Two.' },
    );
    const events = await readSse(await env.k.request(`/api/agents/${agent_id}/message/stream`, { method: 'POST', json: { message: 'two' } }));
    const done = events.find((e) => e.event === 'done')!.data as { files: StoredFile[] };
    assert.deepEqual(
      done.files.map((f) => f.filename),
      ['a.png', 'b.png'],
    );
    env.fake.enqueue({ text: 'No files.' });
    const plain = await json(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'words' } }));
    assert.equal('files' in plain, false, 'a reply without files has no files field');
  });

  test("a file the turn's tools give more than once goes with the reply once", async () => {
    const { agent_id } = await spawn(env.k, 'shower');
    const kept = await files.saveGenerated({ kind: 'image', bytes: PNG, name: 'kept', agentId: agent_id, source: { provider: 'test', model: 'm' } });
    const show = { name: 'show_file', input: { file_id: kept.file_id } };
    env.fake.enqueue({ toolCalls: [show, show] }, { toolCalls: [{ name: 'make_image', input: { name: 'new' } }, show] }, { text: 'Twice shown.' });
    const reply = await json<{ files: StoredFile[] }>(await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'show' } }));
    assert.deepEqual(
      reply.files.map((f) => f.filename),
      ['kept.png', 'new.png'],
    );
    assert.deepEqual(reply.files[0], kept, 'described from its row');
    const session = await json<{ messages: Array<{ files?: StoredFile[] }> }>(await env.k.request(`/api/agents/${agent_id}/session`));
    assert.equal(session.messages.at(-1)!.files!.length, 2);
  });
});

describe('serving stored files: the API key', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ modules: ['auth'], config: `api_key = "${KEY}"` });
  });
  after(() => stopEnv(env));

  test('GET /api/uploads/{id} is not public when an API key is set', async () => {
    const files = env.k.kernel.services.view<UploadFiles>('agents.uploads');
    const file = await files.saveGenerated({ kind: 'image', bytes: PNG, name: 'secret', source: { provider: 'test', model: 'm' } });
    assert.equal((await env.k.request(file.url)).status, 401);
    assert.equal((await env.k.request(file.url, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const res = await env.k.request(file.url, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(PNG));
  });
});

describe('serving stored files: the sweeper', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'talon-uploads-sweep-'));
  let env: Env | undefined;
  after(async () => {
    await stopEnv(env);
    rmSync(home, { recursive: true, force: true });
  });

  test('the module removes expired generated files when it starts (and every 15 minutes after)', async () => {
    env = await startEnv({ home, keepHome: true });
    const files = env.k.kernel.services.view<UploadFiles>('agents.uploads');
    const expired = await files.saveGenerated({ kind: 'image', bytes: PNG, name: 'old', source: { provider: 'test', model: 'm' } });
    const fresh = await files.saveGenerated({ kind: 'image', bytes: PNG, name: 'new', source: { provider: 'test', model: 'm' } });
    const { path: name } = (await env.k.kernel.store.one<{ path: string }>('SELECT path FROM agents_uploads WHERE id = ?', [expired.file_id]))!;
    const file = path.join(home, 'data', 'agents', 'uploads', name);
    assert.ok(existsSync(file));
    await env.k.kernel.store.run('UPDATE agents_uploads SET expires_at = ? WHERE id = ?', [Date.now() - 1, expired.file_id]);
    await env.k.stop();
    env = await startEnv({ home, keepHome: true });
    // The row goes first and the file after it, so the 404 can be seen a moment before the file is gone.
    await waitFor(async () => (await env!.k.request(expired.url)).status === 404 && !existsSync(file), 5_000, 'the expired file swept');
    assert.equal((await env.k.request(fresh.url)).status, 200);
  });
});
