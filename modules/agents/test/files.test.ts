import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { json, pdf, postUpload, spawn, startEnv, stopEnv, uploadFile, type Env } from './helpers.ts';

type Sent = { messages: Array<{ role: string; content: unknown }> };

describe('agents: workspace files, uploads, attachments, trajectory', () => {
  let env: Env;
  before(async () => {
    env = await startEnv({ config: '[agents]\nupload_max_bytes = 2048' });
  });
  after(() => stopEnv(env));

  const upload = (id: string, name: string, type: string, data: Buffer | string) => postUpload(env.k, id, name, type, data);
  const uploadId = (id: string, name: string, type: string, data: Buffer | string) => uploadFile(env.k, id, name, type, data);

  test('workspace files: write, list, read, delete', async () => {
    const { agent_id } = await spawn(env.k, 'filer');
    let res = await env.k.request(`/api/agents/${agent_id}/files/notes.md`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: '# Notes' });
    assert.deepEqual(await res.json(), { status: 'written', agent_id, filename: 'notes.md', size: 7 });
    await env.k.request(`/api/agents/${agent_id}/files/data.bin`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2]),
    });
    await env.k.request(`/api/agents/${agent_id}/files/b64.txt`, {
      method: 'PUT',
      json: { content: Buffer.from('hello').toString('base64'), encoding: 'base64' },
    });
    const list = await json<{ files: Array<{ name: string; size: number }> }>(await env.k.request(`/api/agents/${agent_id}/files`));
    assert.deepEqual(list.files.map((f) => [f.name, f.size]).sort(), [
      ['b64.txt', 5],
      ['data.bin', 3],
      ['notes.md', 7],
    ]);
    res = await env.k.request(`/api/agents/${agent_id}/files/notes.md`);
    assert.equal(await res.text(), '# Notes');
    assert.equal(await (await env.k.request(`/api/agents/${agent_id}/files/b64.txt`)).text(), 'hello');
    res = await env.k.request(`/api/agents/${agent_id}/files/notes.md`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/files/notes.md`)).status, 404);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/files/notes.md`, { method: 'DELETE' })).status, 404);
  });

  test('traversal and symlink escapes are refused with 400', async () => {
    const { agent_id } = await spawn(env.k, 'jailed');
    const ws = path.join(env.k.home, 'workspaces', agent_id);
    const outside = path.join(env.k.home, 'secret.txt');
    writeFileSync(outside, 'secret');
    mkdirSync(ws, { recursive: true });
    symlinkSync(outside, path.join(ws, 'link.txt'));
    symlinkSync(env.k.home, path.join(ws, 'homedir'));
    for (const name of ['..%2Fsecret.txt', '%2Fetc%2Fpasswd', 'link.txt', 'homedir%2Fsecret.txt']) {
      const res = await env.k.request(`/api/agents/${agent_id}/files/${name}`);
      assert.equal(res.status, 400, name);
      assert.equal(typeof (await json(res)).error, 'string');
    }
    const put = await env.k.request(`/api/agents/${agent_id}/files/homedir%2Fevil.txt`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(put.status, 400);
  });

  test('upload round trip, 413 over the limit, 400 without a file', async () => {
    const { agent_id } = await spawn(env.k, 'uploader');
    const res = await upload(agent_id, 'hello.txt', 'text/plain', 'hello upload');
    assert.equal(res.status, 201);
    const meta = await json<{ file_id: string; filename: string; size: number; content_type: string }>(res);
    assert.equal(meta.filename, 'hello.txt');
    assert.equal(meta.size, 12);
    const got = await env.k.request(`/api/uploads/${meta.file_id}`);
    assert.equal(got.status, 200);
    assert.match(got.headers.get('content-type')!, /text\/plain/);
    assert.equal(await got.text(), 'hello upload');
    assert.equal((await upload(agent_id, 'big.txt', 'text/plain', 'x'.repeat(4096))).status, 413);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/upload`, { method: 'POST', json: {} })).status, 400);
    assert.equal((await env.k.request('/api/uploads/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await env.k.request('/api/uploads/nope')).status, 400);
  });

  test('attachments: image → image block, PDF → text, code → text, unknown type skipped, text blocks merged', async () => {
    const { agent_id } = await spawn(env.k, 'reader');
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const ids = [
      await uploadId(agent_id, 'doc.pdf', 'application/pdf', pdf('Quarterly numbers are up')),
      await uploadId(agent_id, 'scan.pdf', 'application/pdf', pdf()),
      await uploadId(agent_id, 'main.rs', '', 'fn main() {}'),
      await uploadId(agent_id, 'conf.yaml', 'application/x-yaml', 'a: 1'),
      await uploadId(agent_id, 'blob.bin', 'application/octet-stream', Buffer.from([1, 2, 3])),
      await uploadId(agent_id, 'pixel.png', 'image/png', png),
    ];
    env.fake.enqueue({ text: 'seen' });
    const before = env.fake.requests.length;
    const res = await env.k.request(`/api/agents/${agent_id}/message`, {
      method: 'POST',
      json: { message: 'look', attachments: ids.map((file_id) => ({ file_id })) },
    });
    assert.equal(res.status, 200);
    const user = (env.fake.requests[before].body as Sent).messages.at(-1)!;
    const parts = user.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    assert.deepEqual(
      parts.map((p) => p.type),
      ['text', 'image_url'],
      'adjacent text blocks were merged',
    );
    assert.match(parts[1].image_url!.url, /^data:image\/png;base64,iVBOR/);
    const text = parts[0].text!;
    assert.match(text, /^look\n\n/);
    assert.match(text, /\[Attached PDF: doc\.pdf\]\nQuarterly numbers are up/);
    assert.match(text, /\[Attached PDF: scan\.pdf\]\n\(No text could be extracted/);
    assert.match(text, /\[Attached file: main\.rs\]\nfn main\(\) \{\}/);
    assert.match(text, /\[Attached file: conf\.yaml\]\na: 1/);
    assert.doesNotMatch(text, /blob\.bin/);
    const other = await spawn(env.k, 'stranger');
    const foreign = await env.k.request(`/api/agents/${other.agent_id}/message`, {
      method: 'POST',
      json: { message: 'x', attachments: [{ file_id: ids[5] }] },
    });
    assert.equal(foreign.status, 400);
  });

  test('trajectory: json and jsonl, redacted; 400 non-UUID; 404 unknown', async () => {
    const { agent_id } = await spawn(env.k, 'audited');
    const sid = (await json<{ session_id: string }>(await env.k.request(`/api/agents/${agent_id}`))).session_id;
    env.fake.enqueue({ text: 'Noted, mail bob@example.com with Bearer abcdefghijklmnop123' });
    await env.k.request(`/api/agents/${agent_id}/message`, {
      method: 'POST',
      json: { message: 'my key is sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and I am alice@example.org' },
    });
    let res = await env.k.request(`/api/agents/${agent_id}/sessions/${sid}/trajectory`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /application\/json/);
    const bundle = await json<{ schema_version: number; metadata: Record<string, unknown>; messages: Array<{ role: string; content: string }> }>(res);
    assert.equal(bundle.metadata.agent_name, 'audited');
    assert.equal(bundle.metadata.model, 'fake-model');
    assert.match(String(bundle.metadata.system_prompt_sha256), /^[0-9a-f]{64}$/);
    assert.equal(typeof bundle.metadata.service_version, 'string');
    assert.equal(bundle.messages.length, 2);
    const all = JSON.stringify(bundle);
    for (const secret of ['sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX', 'alice@example.org', 'bob@example.com', 'abcdefghijklmnop123'])
      assert.ok(!all.includes(secret), secret);
    assert.match(bundle.messages[0].content, /\[REDACTED_API_KEY\].*\[REDACTED_EMAIL\]/);
    res = await env.k.request(`/api/agents/${agent_id}/sessions/${sid}/trajectory?format=jsonl`);
    assert.match(res.headers.get('content-type')!, /application\/x-ndjson/);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 3);
    assert.equal(lines[0].kind, 'metadata');
    assert.equal(lines[1].role, 'User');
    assert.ok(!JSON.stringify(lines).includes('alice@example.org'));
    assert.equal((await env.k.request(`/api/agents/nope/sessions/${sid}/trajectory`)).status, 400);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/nope/trajectory`)).status, 400);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/00000000-0000-4000-8000-000000000000/trajectory`)).status, 404);
    assert.equal((await env.k.request(`/api/agents/00000000-0000-4000-8000-000000000000/sessions/${sid}/trajectory`)).status, 404);
    assert.equal((await env.k.request(`/api/agents/${agent_id}/sessions/${sid}/trajectory?format=xml`)).status, 400);
  });
});
