import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SyncHook } from 'tapable';
import { createLogger } from '../kernel/logger.ts';

class ProviderSettings {
  constructor(readonly api_key: string) {}
}

test('headers, cookies and secrets in any shape never reach a log line', () => {
  const hook = new SyncHook<[string]>(['line']);
  const tapped: string[] = [];
  const { log, earlyLines } = createLogger({ level: 'info', stdout: false, hook });
  log.info({ req: { headers: { authorization: 'Bearer secret-1', cookie: 'sid=secret-2' } } }, 'a request');
  hook.tap('test', (line) => tapped.push(line));
  log.info({ headers: { authorization: 'Bearer secret-3' }, upstream: { headers: { 'x-api-key': 'secret-4' } } }, 'a call');
  log.info({ provider: new ProviderSettings('secret-5'), token: 12345678, deep: { a: { b: { bot_token: 'secret-6' } } } }, 'settings');
  assert.equal(earlyLines().length, 3);
  assert.deepEqual(tapped, earlyLines().slice(1), 'the lines after the tap reach it');
  const text = earlyLines().join('');
  for (const secret of ['secret-1', 'secret-2', 'secret-3', 'secret-4', 'secret-5', '12345678', 'secret-6']) assert.ok(!text.includes(secret), secret);
  assert.equal(text.match(/<redacted>/g)?.length, 7);
});
