/** The upload store alone (UploadStore on a test database): sniffed types, kinds and caps, atomic writes, the sweeper. */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openTestStore, type TestStore } from '@talon/testing';
import { UploadStore, type UploadLimits, type UploadRow } from '../services/uploads.ts';
import { MP4, PNG } from './media-bytes.ts';

const MODULE = path.resolve(import.meta.dirname, '..');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(64)]);
const HTML = Buffer.from('<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>');
const AGENT = '11111111-1111-4111-8111-111111111111';

/** A 16-bit mono WAV of `samples` silent samples. */
function wav(samples: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + samples * 2, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(samples * 2, 40);
  return Buffer.concat([h, Buffer.alloc(samples * 2)]);
}

const refused = (pattern: RegExp) => (err: Error) => err.name === 'FileRefused' && pattern.test(err.message);

describe('the upload store', () => {
  let db: TestStore;
  let root: string;
  let limits: UploadLimits;
  let uploads: UploadStore;
  const row = (id: string) => db.store.one<UploadRow>('SELECT * FROM agents_uploads WHERE id = ?', [id]);
  const files = () => (existsSync(root) ? readdirSync(root) : []);

  before(() => {
    db = openTestStore([MODULE]);
  });
  const roots: string[] = [];
  after(() => {
    db.close();
    for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'talon-uploads-'));
    roots.push(root);
    limits = { image: 10 << 20, audio: 25 << 20, video: 100 << 20, retentionDays: 7 };
    uploads = new UploadStore(
      db.store,
      () => root,
      () => limits,
    );
    await db.store.run('DELETE FROM agents_uploads');
  });

  test('a generated image: type and extension from the bytes, sha256, generated with the retention, readable by id', async () => {
    const before = Date.now();
    const file = await uploads.saveGenerated({
      kind: 'image',
      bytes: PNG,
      name: 'a cat.jpeg',
      agentId: AGENT,
      source: { provider: 'openai', model: 'gpt-image-1' },
    });
    assert.deepEqual(file, { file_id: file.file_id, url: `/api/uploads/${file.file_id}`, content_type: 'image/png', filename: 'a cat.png', size: PNG.length });
    const r = (await row(file.file_id))!;
    assert.equal(r.sha256, createHash('sha256').update(PNG).digest('hex'));
    assert.equal(r.generated, 1);
    assert.equal(r.kind, 'image');
    assert.equal(r.source_provider, 'openai');
    assert.equal(r.agent_id, AGENT);
    assert.ok(r.expires_at! >= before + 7 * 86_400_000 && r.expires_at! <= Date.now() + 7 * 86_400_000);
    assert.equal(r.path, `${file.file_id}.png`, 'the name in the uploads folder, not a full path');
    assert.deepEqual(await uploads.read(file.file_id), { bytes: PNG, content_type: 'image/png', filename: 'a cat.png' });
    assert.equal(await uploads.read('00000000-0000-4000-8000-000000000000'), undefined);
    assert.equal(await uploads.read('../../etc/passwd'), undefined);
  });

  test("read with an owner: the agent's own files and generated files of no agent; any other is unknown", async () => {
    const source = { provider: 'p', model: 'm' };
    const OTHER = '22222222-2222-4222-8222-222222222222';
    const mine = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'mine', agentId: AGENT, source });
    const theirs = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'theirs', agentId: OTHER, source });
    const nobodys = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'route', source });
    const upload = await uploads.save(AGENT, 'u.txt', 'text/plain', Buffer.from('mine'));
    const readable = async (id: string, agentId: string | undefined) => (await uploads.read(id, { agentId }))?.filename;
    assert.equal(await readable(mine.file_id, AGENT), 'mine.png');
    assert.equal(await readable(upload.id, AGENT), 'u.txt');
    assert.equal(await readable(nobodys.file_id, AGENT), 'route.png', "a generated file of no agent (the HTTP routes) is anyone's");
    assert.equal(await readable(theirs.file_id, AGENT), undefined);
    assert.equal(await readable(upload.id, OTHER), undefined);
    assert.equal(await readable(mine.file_id, undefined), undefined, "no agent reads no agent's files");
    assert.equal(await readable(nobodys.file_id, undefined), 'route.png');
    await db.store.run('UPDATE agents_uploads SET agent_id = NULL WHERE id = ?', [upload.id]);
    assert.equal(await readable(upload.id, AGENT), undefined, "an upload without its agent is nobody's to read");
    assert.equal((await uploads.read(theirs.file_id))?.filename, 'theirs.png', 'without an owner the read is unchecked');
  });

  test('describe: the file as saved, from its row alone (no bytes read), under the same owner rule', async () => {
    const source = { provider: 'p', model: 'm' };
    const file = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'seen', agentId: AGENT, source });
    writeFileSync(uploads.fileOf((await row(file.file_id))!), 'x');
    assert.deepEqual(await uploads.describe(file.file_id, { agentId: AGENT }), file, "the size is the row's, not the bytes now on disk");
    assert.equal(await uploads.describe(file.file_id, { agentId: '22222222-2222-4222-8222-222222222222' }), undefined);
    assert.equal(await uploads.describe('00000000-0000-4000-8000-000000000000', { agentId: AGENT }), undefined);
    assert.equal(await uploads.describe('../../etc/passwd', { agentId: AGENT }), undefined);
  });

  test('bytes that are not of the kind are refused (FileRefused saying why), and nothing is kept', async () => {
    const source = { provider: 'p', model: 'm' };
    await assert.rejects(uploads.saveGenerated({ kind: 'image', bytes: HTML, name: 'x', source }), refused(/image .*HTML page/));
    await assert.rejects(
      uploads.saveGenerated({ kind: 'audio', bytes: JPEG, name: 'x', source }),
      refused(/audio is image\/jpeg, which is not an accepted audio type/),
    );
    await assert.rejects(uploads.saveGenerated({ kind: 'video', bytes: wav(10), name: 'x', source }), refused(/video is audio\/wav/));
    await assert.rejects(uploads.saveGenerated({ kind: 'image', bytes: Buffer.from('{"error":"quota"}'), name: 'x', source }), refused(/JSON/));
    assert.deepEqual(files(), []);
    assert.equal((await db.store.many('SELECT id FROM agents_uploads')).length, 0);
  });

  test('audio and video: a WAV, an MP4 as video, the same MP4 as audio (the container named as audio)', async () => {
    const source = { provider: 'local', model: 'flite' };
    assert.equal((await uploads.saveGenerated({ kind: 'audio', bytes: wav(1600), name: 'speech', source })).content_type, 'audio/wav');
    const video = await uploads.saveGenerated({ kind: 'video', bytes: MP4, name: 'clip', source });
    assert.deepEqual([video.content_type, video.filename], ['video/mp4', 'clip.mp4']);
    const audio = await uploads.saveGenerated({ kind: 'audio', bytes: MP4, name: 'song', source });
    assert.deepEqual([audio.content_type, audio.filename], ['audio/mp4', 'song.m4a']);
    assert.equal((await row(video.file_id))!.agent_id, null, 'a generated file needs no agent');
  });

  test("each kind's cap, read when the file comes (a config change applies to the next one)", async () => {
    const source = { provider: 'p', model: 'm' };
    limits.image = PNG.length - 1;
    await assert.rejects(uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'x', source }), refused(/over the cap of \d+ \(generated_image_max_bytes\)/));
    limits.image = PNG.length;
    await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'x', source });
    limits.video = MP4.length - 1;
    await assert.rejects(uploads.saveGenerated({ kind: 'video', bytes: MP4, name: 'x', source }), refused(/generated_video_max_bytes/));
    limits.audio = 100;
    await assert.rejects(uploads.saveGenerated({ kind: 'audio', bytes: wav(100), name: 'x', source }), refused(/generated_audio_max_bytes/));
  });

  test("uploads: the sniffed type beats the client's label; active labels become octet-stream; other labels stay", async () => {
    const save = async (name: string, label: string, data: Buffer | string) => (await uploads.save(AGENT, name, label, Buffer.from(data))).content_type;
    assert.equal(await save('evil.html', 'text/html', PNG), 'image/png');
    assert.equal(await save('page.html', 'text/html', HTML), 'application/octet-stream');
    assert.equal(await save('page.html', 'TEXT/HTML; charset=utf-8', HTML), 'application/octet-stream');
    assert.equal(await save('logo.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"/>'), 'application/octet-stream');
    assert.equal(await save('feed.xml', 'text/plain', '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>'), 'application/octet-stream');
    assert.equal(await save('x.js', 'application/javascript', 'alert(1)'), 'application/octet-stream');
    assert.equal(await save('notes.txt', 'text/plain', 'hello'), 'text/plain');
    assert.equal(await save('data.json', 'application/json', '{}'), 'application/json');
    assert.equal(await save('odd', 'not a type\r\nx-evil: 1', 'x'), 'application/octet-stream');
    assert.equal((await uploads.save(AGENT, '../../up.txt', 'text/plain', Buffer.from('x'))).filename, 'up.txt', 'no folders in a name');
  });

  test('writes are atomic: the final name never holds part of the file, and no temporary file is left', async () => {
    const big = Buffer.alloc(24 << 20, 7);
    const seen = new Set<number>();
    let watching = true;
    const watch = async () => {
      while (watching) {
        for (const name of files().filter((n) => !n.startsWith('.tmp-'))) seen.add(statSync(path.join(root, name)).size);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const watcher = watch();
    const saved = await uploads.save(AGENT, 'big.bin', 'application/octet-stream', big);
    watching = false;
    await watcher;
    assert.ok(
      [...seen].every((size) => size === big.length),
      `sizes seen under the final name: ${[...seen].join(', ')}`,
    );
    assert.deepEqual(files(), [saved.id]);
    assert.ok(readFileSync(uploads.fileOf(saved)).equals(big));
  });

  test('the sweeper removes expired generated files (rows and bytes) and stale temporaries, nothing else', async () => {
    const source = { provider: 'p', model: 'm' };
    limits.retentionDays = 1;
    const expiring = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'old', source });
    limits.retentionDays = 0;
    const kept = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'kept', source });
    assert.equal((await row(kept.file_id))!.expires_at, null, 'retention 0 keeps the file');
    const upload = await uploads.save(AGENT, 'u.txt', 'text/plain', Buffer.from('mine'));
    const staleTemp = path.join(root, '.tmp-dead');
    const freshTemp = path.join(root, '.tmp-writing');
    writeFileSync(staleTemp, 'x');
    writeFileSync(freshTemp, 'x');
    const old = (Date.now() - 2 * 3_600_000) / 1000;
    utimesSync(staleTemp, old, old);

    assert.equal(await uploads.sweep(), 0, 'nothing expired yet');
    assert.equal(existsSync(staleTemp), false);
    assert.equal(existsSync(freshTemp), true, 'a temporary file being written is left alone');
    const expiredPath = uploads.fileOf((await row(expiring.file_id))!);
    assert.equal(await uploads.sweep(Date.now() + 2 * 86_400_000), 1);
    assert.equal(await row(expiring.file_id), undefined);
    assert.equal(existsSync(expiredPath), false);
    assert.ok(await row(kept.file_id));
    assert.ok(await row(upload.id), 'uploads never expire');
    assert.equal(await uploads.sweep(Date.now() + 2 * 86_400_000), 0, 'a row is claimed once');
  });

  test('a data directory moved elsewhere (a restore into another home, a node mounting it at another path) still finds its files, also those whose rows hold a full path', async () => {
    const source = { provider: 'p', model: 'm' };
    const named = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'named', agentId: AGENT, source });
    const old = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'old', agentId: AGENT, source });
    // A row written before names were kept: the full path of the folder the file was in then.
    await db.store.run('UPDATE agents_uploads SET path = ? WHERE id = ?', [path.join('/srv/old-home/data/agents/uploads', `${old.file_id}.png`), old.file_id]);
    const moved = mkdtempSync(path.join(tmpdir(), 'talon-uploads-moved-'));
    roots.push(moved);
    renameSync(root, path.join(moved, 'uploads'));
    root = path.join(moved, 'uploads');
    for (const file of [named, old])
      assert.deepEqual(await uploads.read(file.file_id), { bytes: PNG, content_type: 'image/png', filename: `${file.filename}` });
    await uploads.deleteAgent(AGENT);
    assert.deepEqual(files(), [], 'removed where they are now');
  });

  test('killing an agent removes its generated files too', async () => {
    const file = await uploads.saveGenerated({ kind: 'image', bytes: PNG, name: 'x', agentId: AGENT, source: { provider: 'p', model: 'm' } });
    await uploads.deleteAgent(AGENT);
    assert.equal(await row(file.file_id), undefined);
    assert.deepEqual(files(), []);
  });
});

test('the migration keeps the uploads stored before it (created_at as epoch ms, no hash, not generated)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'talon-uploads-migration-'));
  const db = new Database(path.join(dir, 'talon.db'));
  try {
    const migrations = readdirSync(path.join(MODULE, 'migrations'))
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const apply = (names: string[]) => names.forEach((name) => db.exec(readFileSync(path.join(MODULE, 'migrations', name), 'utf8')));
    const at = migrations.indexOf('0004_generated_files.sql');
    apply(migrations.slice(0, at));
    db.prepare('INSERT INTO agents_uploads (id, agent_id, filename, content_type, size, path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      'u1',
      AGENT,
      'a.txt',
      'text/plain',
      3,
      '/x/u1',
      '2026-11-20T10:00:00.250Z',
    );
    apply(migrations.slice(at));
    assert.deepEqual(db.prepare('SELECT * FROM agents_uploads').get(), {
      id: 'u1',
      agent_id: AGENT,
      filename: 'a.txt',
      content_type: 'text/plain',
      size: 3,
      path: '/x/u1',
      created_at: Date.parse('2026-11-20T10:00:00.250Z'),
      sha256: null,
      generated: 0,
      kind: null,
      source_provider: null,
      source_model: null,
      expires_at: null,
    });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
