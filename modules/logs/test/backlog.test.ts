import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backlog } from '../services/backlog.ts';

test('the backlog keeps the latest lines, oldest first; size 0 keeps none', () => {
  const backlog = new Backlog(3);
  backlog.push('a');
  backlog.push('b');
  assert.deepEqual(backlog.all(), ['a', 'b']);
  for (const line of ['c', 'd', 'e']) backlog.push(line);
  assert.deepEqual(backlog.all(), ['c', 'd', 'e']);
  backlog.push('f');
  assert.deepEqual(backlog.all(), ['d', 'e', 'f']);
  const none = new Backlog(0);
  none.push('a');
  assert.deepEqual(none.all(), []);
});
