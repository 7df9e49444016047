import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { HookStore } from '../services/store.ts';

const migration = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations', '0001_webhooks.sql'), 'utf8');

test('the journal keeps rows that ended for the retention only; pending rows stay whatever their age', () => {
  const db = new Database(':memory:');
  db.exec(migration);
  const store = new HookStore(db);
  const now = new Date().toISOString();
  store.insert({
    id: 'h1',
    kind: 'outbound',
    name: 'n',
    url: 'http://127.0.0.1/',
    events: '["all"]',
    secret: null,
    enabled: 1,
    disabled_reason: null,
    consecutive_failures: 0,
    created_at: now,
    updated_at: now,
  });
  store.enqueue(['old-delivered', 'old-failed', 'old-pending', 'new-delivered'].map((e) => ({ hook_id: 'h1', event_id: e, event: 'custom', body: '{}' })));
  const set = db.prepare('UPDATE webhooks_deliveries SET status = ?, created_at = ? WHERE event_id = ?');
  const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
  set.run('delivered', old, 'old-delivered');
  set.run('failed', old, 'old-failed');
  set.run('pending', old, 'old-pending');
  set.run('delivered', now, 'new-delivered');
  assert.equal(store.prune(new Date(Date.now() - 7 * 86_400_000)), 2);
  const left = (db.prepare('SELECT event_id FROM webhooks_deliveries ORDER BY id').all() as Array<{ event_id: string }>).map((r) => r.event_id);
  assert.deepEqual(left, ['old-pending', 'new-delivered']);
});
