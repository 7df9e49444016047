/** The conditional updates that let several processes share the requests: each step happens once, by one of them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openTestDbStore } from '@talon/testing';
import { ApprovalStore, type StoredApproval } from '../services/store.ts';

function request(id: string, node: string | null, held = true): StoredApproval {
  const now = new Date().toISOString();
  return {
    id,
    agent_id: 'agent',
    agent_name: 'a',
    action: 'file_write',
    description: 'd',
    payload: {},
    risk_level: 'high',
    status: 'pending',
    created_at: now,
    decided_at: null,
    decided_by: null,
    expires_at: now,
    escalations: 0,
    notified: null,
    node,
    ...(held ? { held: { tool: 'file_write', input: {}, session_id: 's' } } : {}),
  };
}

/** A fresh database: a SQLite file, or with TALON_TEST_DB=postgres a PostgreSQL database. */
async function withStore(fn: (store: ApprovalStore) => Promise<void>): Promise<void> {
  const dir = path.resolve(import.meta.dirname, '..');
  const opened = await openTestDbStore([dir]);
  try {
    await fn(new ApprovalStore(opened.store));
  } finally {
    await opened.close();
  }
}

test('an escalation and a decision each happen once, whoever tries with what they read', () =>
  withStore(async (store) => {
    const a = request('r1', 'node-a');
    await store.tx((t) => store.insert(t, a));
    const later = new Date(Date.now() + 60_000).toISOString();
    assert.equal(await store.tx((t) => store.escalate(t, a, later)), true);
    assert.equal(await store.tx((t) => store.escalate(t, a, later)), false, 'a second process read escalations = 0 too');
    assert.equal((await store.get('r1'))!.escalations, 1);
    const at = new Date().toISOString();
    assert.equal(await store.tx((t) => store.resolve(t, 'r1', 'expired', 'timeout', at, 'skipped')), true);
    assert.equal(await store.tx((t) => store.resolve(t, 'r1', 'approved', 'api', at, 'approved')), false);
    assert.equal(await store.tx((t) => store.escalate(t, a, later)), false, 'a decided request is not escalated');
  }));

test('a decided held call is resumed once, by its owner; a dead or unknown owner’s calls are adopted', () =>
  withStore(async (store) => {
    for (const a of [request('mine', 'node-a'), request('dead', 'node-d'), request('old', null), request('pending', 'node-d'), request('api', null, false)])
      await store.tx((t) => store.insert(t, a));
    const at = new Date().toISOString();
    for (const id of ['mine', 'dead', 'old', 'api']) await store.tx((t) => store.resolve(t, id, 'rejected', 'api', at, 'rejected'));
    assert.equal(await store.claimResume('mine', 'node-b'), undefined, 'not the owner');
    const claimed = await store.claimResume('mine', 'node-a');
    assert.equal(claimed?.outcome, 'rejected');
    assert.equal(claimed?.approval.status, 'rejected');
    assert.equal(await store.claimResume('mine', 'node-a'), undefined, 'once');
    assert.deepEqual(await store.adopt('node-b', { dead: 'node-d' }), ['dead'], 'decided ones to resume; the pending one is adopted too');
    assert.equal((await store.get('pending'))!.node, 'node-b');
    assert.deepEqual(await store.adopt('node-c', { notLive: ['node-b'] }), ['old'], 'a row without an owner; not the request made through the API');
    assert.deepEqual(await store.unresumed('node-b'), ['dead']);
  }));
