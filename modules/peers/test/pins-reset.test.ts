/** A reset of the change feed (the key '': this process may have missed notes) makes the pins read every pin again. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { openTestStore, waitFor } from '@talon/testing';
import { Pins } from '../services/pins.ts';

const log = pino({ level: 'silent' });

test("heard(''): a pin stored by another process whose note never arrived is the one checked", async () => {
  const opened = openTestStore([path.resolve(import.meta.dirname, '..')]);
  try {
    const here = new Pins(opened.store, async () => undefined, log);
    const there = new Pins(opened.store, async () => undefined, log);
    await Promise.all([here.load(), there.load()]);
    assert.deepEqual(there.check('n1', 'key-1', '10.0.0.1:1'), { ok: true, firstContact: true });
    await waitFor(async () => (await opened.store.one('SELECT 1 FROM peers_identities WHERE node_id = ?', ['n1'])) !== undefined, 2000, 'stored');
    await here.heard('');
    assert.equal(here.check('n1', 'key-2', '10.0.0.2:1').ok, false, "another key for the other process's pin is refused");
    assert.deepEqual(here.check('n1', 'key-1', '10.0.0.2:1'), { ok: true, firstContact: false });
  } finally {
    opened.close();
  }
});
