import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startTestKernel } from '@talon/testing';
import { accessLog } from '../services/access-log.ts';

const probe = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'logs-probe');

interface AccessLine {
  level: number;
  msg: string;
  reqId: string;
  method: string;
  url: string;
  statusCode: number;
  ms: number;
  routeModule?: string;
  error?: string;
}

const accessLines = (lines: readonly string[]): AccessLine[] =>
  lines
    .join('')
    .split('\n')
    .filter((l) => l.includes('"request completed"'))
    .map((l) => JSON.parse(l) as AccessLine);

test('one access line per request with its request id; a quiet route logs at debug level', async () => {
  const k = await startTestKernel({
    only: ['logs', 'logs-probe', 'request-id', 'error-envelope'],
    config: `log_level = "debug"\nmodule_paths = [${JSON.stringify(probe)}]\n`,
  });
  const loud = await k.request('/api/logs-probe/loud?x=1');
  assert.equal(loud.status, 200);
  await loud.text();
  await (await k.request('/api/logs-probe/quiet')).text();
  await (await k.request('/api/nothing')).text();
  await k.stop();
  const lines = accessLines(k.logLines());
  const [line] = lines.filter((l) => l.url === '/api/logs-probe/loud?x=1');
  assert.ok(line, 'the plain route has an access line');
  assert.deepEqual(
    { ...line, ms: 0 },
    { ...line, level: 30, msg: 'request completed', reqId: loud.headers.get('x-request-id'), method: 'GET', statusCode: 200, ms: 0, routeModule: 'logs-probe' },
  );
  assert.equal(typeof line.ms, 'number');
  assert.deepEqual(
    lines.filter((l) => l.url === '/api/logs-probe/quiet').map((l) => l.level),
    [20],
    'the quiet route: one line, at debug',
  );
  const unmatched = lines.find((l) => l.url === '/api/nothing');
  assert.equal(unmatched?.statusCode, 404, 'unmatched requests are logged too');
  assert.equal(unmatched.error, 'no route GET /api/nothing', 'with the error they were answered with');
  assert.equal(unmatched.routeModule, undefined, 'no module answered');
  assert.equal(line.error, undefined, 'a success has no error');
});

test('below the level, no line is written (a quiet route at info, everything at warn)', () => {
  const written: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void written.push(l) });
  const event = { id: 'r1', method: 'GET', url: '/x', route: '/x', ip: '127.0.0.1', statusCode: 200, durationMs: 1.23456 };
  const tap = accessLog(log);
  tap({ ...event, quiet: true });
  assert.deepEqual(written, []);
  tap({ ...event, quiet: false });
  assert.equal(accessLines(written)[0].ms, 1.23);
  log.level = 'warn';
  tap({ ...event, quiet: false });
  assert.equal(written.length, 1);
});

test('with the logs module disabled there is no access log, and the service serves', async () => {
  // Every built-in module but logs: no other part of the service writes access lines.
  const k = await startTestKernel({ config: `log_level = "info"\nmodule_paths = [${JSON.stringify(probe)}]\n[modules]\ndisabled = ["logs"]\n` });
  try {
    assert.equal(k.kernel.modules().find((m) => m.id === 'logs')?.state, 'disabled');
    assert.equal((await k.request('/api/logs-probe/loud')).status, 200);
    assert.equal((await k.request('/api/health')).status, 200);
  } finally {
    await k.stop();
  }
  assert.ok(k.logLines().length > 0, 'the service logged');
  assert.deepEqual(accessLines(k.logLines()), []);
});
