/**
 * Serving a 50 MB video from the upload store (GET /api/uploads/{id}) on the service as `npm start` runs it:
 * - memory stays flat: the service's RSS, sampled every 20 ms during 20 full downloads (one after another, then 4 at
 *   once), against its RSS just before them (after the upload and two warm-up downloads); the file is streamed from
 *   disk, so the growth is a few stream buffers, not the file (target: far below the file's 50 MB);
 * - a Range request's first byte: 200 requests of 64 KiB at random offsets over one keep-alive connection, time from
 *   sending the request to the first body byte (target: p99 ≤ 20 ms on loopback).
 * The video is the 1 s fixture padded to 50 MB (its type is still sniffed as video/mp4), uploaded through
 * POST /api/agents/{id}/upload, so the atomic write of 50 MB is exercised too (its time is reported).
 */
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, killTree, percentile, rssMb, spawnDetached, startScriptNodeArgs, waitHttp } from './util.ts';

const SIZE = 50 * 1024 * 1024;
const DOWNLOADS = 20;
const RANGES = 200;
const RANGE_BYTES = 64 * 1024;

export async function uploadsBench() {
  const port = await freePort();
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-uploads-'));
  writeFileSync(
    path.join(home, 'config.toml'),
    [
      `api_listen = "127.0.0.1:${port}"`,
      'log_level = "warn"',
      'rate_limit_per_second = 1000000',
      '[default_model]',
      'provider = "openai"',
      'model = "fake-model"',
      // Never called: an agent needs a model to be spawned, the bench sends it no message.
      'base_url = "http://127.0.0.1:9/v1"',
      'api_key_env = "BENCH_FAKE_KEY"',
      '[agents]',
      `upload_max_bytes = ${SIZE + 1024 * 1024}`,
      '',
    ].join('\n'),
  );
  const daemon = spawnDetached(process.execPath, [...startScriptNodeArgs(), 'scripts/start.mjs'], { TALON_HOME: home, BENCH_FAKE_KEY: 'x' });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHttp(`${url}/api/health`, 120_000, 50);
    const { fileId, uploadMs } = await uploadVideo(url);
    const fileUrl = `${url}/api/uploads/${fileId}`;
    for (let i = 0; i < 2; i++) await download(fileUrl);
    await new Promise((r) => setTimeout(r, 1_000));
    const baseline = rssMb(daemon.pid!);
    const peaks = { sequential: baseline, concurrent: baseline };
    let phase: keyof typeof peaks = 'sequential';
    const sampler = setInterval(() => (peaks[phase] = Math.max(peaks[phase], rssMb(daemon.pid!))), 20);
    const started = performance.now();
    let bytes = 0;
    try {
      for (let i = 0; i < DOWNLOADS - 4; i++) bytes += await download(fileUrl);
      phase = 'concurrent';
      bytes += (await Promise.all(Array.from({ length: 4 }, () => download(fileUrl)))).reduce((a, b) => a + b, 0);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    if (bytes !== DOWNLOADS * SIZE) throw new Error(`downloaded ${bytes} bytes, expected ${DOWNLOADS * SIZE}`);
    const firstByte = await rangeFirstBytes(fileUrl);
    return {
      'upload of 50 MB (multipart, sniffed, atomic write) ms': uploadMs.toFixed(0),
      'RSS before the downloads MB': baseline.toFixed(1),
      'RSS growth during 16 downloads one after another MB (the file is 50 MB)': (peaks.sequential - baseline).toFixed(1),
      'RSS growth during 4 more at once MB': (Math.max(peaks.sequential, peaks.concurrent) - baseline).toFixed(1),
      'download throughput MB/s': (bytes / 1024 / 1024 / seconds).toFixed(0),
      'Range 64 KiB first byte p50 / p99 / max ms': `${percentile(firstByte, 50).toFixed(2)} / ${percentile(firstByte, 99).toFixed(2)} / ${Math.max(...firstByte).toFixed(2)}`,
    };
  } finally {
    await killTree(daemon);
    rmSync(home, { recursive: true, force: true });
  }
}

async function uploadVideo(url: string): Promise<{ fileId: string; uploadMs: number }> {
  const spawned = await fetch(`${url}/api/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ manifest_toml: 'name = "bench-uploads"\n[model]\nprovider = "default"\nmodel = "default"\n' }),
  });
  if (spawned.status !== 201) throw new Error(`spawning the agent answered ${spawned.status}: ${await spawned.text()}`);
  const { agent_id } = (await spawned.json()) as { agent_id: string };
  const sample = readFileSync(path.join(import.meta.dirname, '..', 'test', 'fixtures', 'media', 'sample.mp4'));
  const video = Buffer.alloc(SIZE);
  sample.copy(video);
  const form = new FormData();
  form.append('file', new Blob([video], { type: 'application/octet-stream' }), 'video.mp4');
  const started = performance.now();
  const res = await fetch(`${url}/api/agents/${agent_id}/upload`, { method: 'POST', body: form });
  const uploadMs = performance.now() - started;
  const body = (await res.json()) as { file_id: string; content_type: string; error?: string };
  if (res.status !== 201) throw new Error(`the upload answered ${res.status}: ${body.error}`);
  if (body.content_type !== 'video/mp4') throw new Error(`the upload was stored as ${body.content_type}`);
  return { fileId: body.file_id, uploadMs };
}

/** One full download, counted and dropped as it arrives (the client keeps none of it). */
async function download(fileUrl: string): Promise<number> {
  const res = await fetch(fileUrl);
  if (res.status !== 200 || !res.body) throw new Error(`GET answered ${res.status}`);
  let n = 0;
  for await (const chunk of res.body) n += (chunk as Uint8Array).byteLength;
  return n;
}

/** Time to the first body byte of each Range request (ms), over one keep-alive connection. */
async function rangeFirstBytes(fileUrl: string): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < RANGES + 20; i++) {
      const start = Math.floor(Math.random() * (SIZE - RANGE_BYTES));
      const ms = await firstByte(fileUrl, `bytes=${start}-${start + RANGE_BYTES - 1}`, agent);
      if (i >= 20) times.push(ms); // the first 20 warm up the connection and the route
    }
  } finally {
    agent.destroy();
  }
  return times;
}

function firstByte(fileUrl: string, range: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first: number | undefined;
    const req = http.get(fileUrl, { agent, headers: { range } }, (res) => {
      if (res.statusCode !== 206) reject(new Error(`Range answered ${res.statusCode}`));
      res.on('data', () => (first ??= performance.now() - started));
      res.on('end', () => resolve(first ?? NaN));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('Range request timed out')));
    req.on('error', reject);
  });
}
