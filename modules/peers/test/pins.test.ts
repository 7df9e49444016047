import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, waitFor } from '@talon/testing';
import { Pins } from '../services/pins.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const log = pino({ level: 'silent' });

test('a pin is kept for the next handshakes; two processes that first met a node with different keys end up with the one stored first', async () => {
  const opened = openTestStore([moduleDir]);
  // A second connection on the same file: another process, which has not heard of the first one's pin yet.
  const other = openTestStore([], opened.file);
  try {
    const noted: string[] = [];
    const a = new Pins(opened.store, async (_t, node) => void noted.push(node), log);
    const b = new Pins(other.store, async () => undefined, log);
    await Promise.all([a.load(), b.load()]);
    assert.deepEqual(a.check('n1', 'key-1', '10.0.0.1:1'), { ok: true, firstContact: true });
    await waitFor(async () => (await opened.store.one('SELECT node_id FROM peers_identities WHERE node_id = ?', ['n1'])) !== undefined, 2000, 'stored');
    assert.deepEqual(noted, ['n1'], 'the other processes are told');
    assert.equal(a.check('n1', 'key-2', '10.0.0.1:1').ok, false, 'another key for a pinned node is refused');
    // b meets n1 with another key before it heard of a's pin: the stored pin wins once b tries to store its own.
    assert.deepEqual(b.check('n1', 'key-2', '10.0.0.2:1'), { ok: true, firstContact: true });
    await waitFor(() => b.check('n1', 'key-1', '10.0.0.2:1').ok, 2000, 'the stored pin taken');
    assert.equal(b.check('n1', 'key-2', '10.0.0.2:1').ok, false);
    assert.equal(b.count(), 1);
  } finally {
    other.close();
    opened.close();
  }
});
