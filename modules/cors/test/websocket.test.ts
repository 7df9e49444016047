import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startTestKernel, type TestKernel } from '@talon/testing';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['cors', 'request-id', 'error-envelope', 'cors-ws-probe'], config: `module_paths = [${JSON.stringify(fixtures)}]\n` });
});
after(() => k?.stop());

/** Opens a WebSocket; resolves with the first message, or the HTTP status when the upgrade is refused. */
function connect(origin?: string): Promise<{ message?: string; status?: number; body?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${k.url.replace(/^http/, 'ws')}/probe/ws`, { headers: origin ? { origin } : {} });
    ws.on('message', (data) => {
      ws.close();
      resolve({ message: String(data) });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    ws.on('error', reject);
  });
}

test('a WebSocket handshake from a foreign page is refused (cross-site WebSocket hijacking)', async () => {
  const refused = await connect('https://evil.example');
  assert.equal(refused.status, 403);
  assert.deepEqual(JSON.parse(refused.body ?? ''), { error: "origin 'https://evil.example' is not allowed (see cors_origins)" });
});

test('localhost pages and clients without an Origin connect', async () => {
  assert.deepEqual(await connect('http://localhost:5173'), { message: 'hello' });
  assert.deepEqual(await connect(), { message: 'hello' });
});
