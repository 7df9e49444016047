/** The session histories kept in memory: never a message short, and dropped when another process changed them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { ChangeFeed, Queries } from '@talon/module-sdk';
import { openTestStore } from '@talon/testing';
import { SessionService } from '../services/sessions.ts';

const MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A change feed that records notes and lets the test play another process's note. */
function feed() {
  const handlers = new Map<string, (key: string) => unknown>();
  const notes: string[] = [];
  const changes: ChangeFeed = {
    note: async (topic: string, key = '', t?: Queries) => void notes.push(`${topic}:${key}:${t ? 'tx' : 'none'}`),
    on: (topic, handler) => void handlers.set(topic, handler),
  };
  return { changes, notes, remote: (topic: string, key: string) => handlers.get(topic)?.(key) };
}

function setup() {
  const opened = openTestStore([MODULE]);
  const f = feed();
  const sessions = new SessionService(opened.store, f.changes, pino({ level: 'silent' }));
  return { ...opened, ...f, sessions };
}

test('a message added while a history is being read is in the copy kept in memory', async () => {
  const { sessions, close } = setup();
  try {
    const id = await sessions.create('agent');
    sessions.append(id, { role: 'User', content: 'one' });
    const reading = sessions.history(id);
    sessions.append(id, { role: 'Assistant', content: 'two' });
    assert.deepEqual(
      (await reading).messages.map((m) => m.content),
      ['one', 'two'],
    );
    // The copy in memory is the one later turns read.
    assert.deepEqual(
      (await sessions.history(id)).messages.map((m) => m.content),
      ['one', 'two'],
    );
  } finally {
    close();
  }
});

test("another process's note drops the copy in memory; the messages written note the session once per transaction", async () => {
  const { sessions, store, notes, remote, close } = setup();
  try {
    const id = await sessions.create('agent');
    sessions.append(id, { role: 'User', content: 'a' });
    sessions.append(id, { role: 'Assistant', content: 'b' });
    assert.equal((await sessions.history(id)).messages.length, 2);
    assert.deepEqual(notes, [`sessions:${id}:tx`], 'one note for the two messages, in their transaction');
    // Another process adds a message and notes the session.
    await store.run("INSERT INTO agents_messages (session_id, role, content, created_at) VALUES (?, 'User', 'c', ?)", [id, new Date().toISOString()]);
    assert.equal((await sessions.history(id)).messages.length, 2, 'served from memory until the note');
    await remote('sessions', id);
    assert.deepEqual(
      (await sessions.history(id)).messages.map((m) => m.content),
      ['a', 'b', 'c'],
    );
  } finally {
    close();
  }
});
