/** `?` placeholders numbered for PostgreSQL, and only outside quoted text and comments (no server needed). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { numberPlaceholders } from '../../kernel/store/postgres-sql.ts';

test('each ? becomes $1, $2, … in order', () => {
  assert.equal(numberPlaceholders('SELECT a FROM t WHERE b = ? AND c IN (?, ?)'), 'SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)');
  assert.equal(numberPlaceholders('UPDATE t SET a = ?,b=?'), 'UPDATE t SET a = $1,b=$2');
  assert.equal(numberPlaceholders('SELECT 1'), 'SELECT 1');
});

test('a ? in a string, a quoted name, a dollar-quoted body or a comment stays text', () => {
  const cases: Array<[string, string]> = [
    ["SELECT '?' AS q, ? AS p", "SELECT '?' AS q, $1 AS p"],
    ["SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1"],
    ["SELECT E'a\\' ?', ?", "SELECT E'a\\' ?', $1"],
    ['SELECT "odd?name", ? FROM t', 'SELECT "odd?name", $1 FROM t'],
    ['SELECT "a""?", ?', 'SELECT "a""?", $1'],
    ['SELECT $$ ? $$, ?', 'SELECT $$ ? $$, $1'],
    ['SELECT $fn$ ? $x$ ? $fn$, ?', 'SELECT $fn$ ? $x$ ? $fn$, $1'],
    ['SELECT ? -- why?\n, ?', 'SELECT $1 -- why?\n, $2'],
    ['SELECT /* a ? /* nested ? */ still ? */ ?', 'SELECT /* a ? /* nested ? */ still ? */ $1'],
    ['SELECT a$b$ FROM t WHERE c = ?', 'SELECT a$b$ FROM t WHERE c = $1'],
  ];
  for (const [sql, numbered] of cases) assert.equal(numberPlaceholders(sql), numbered, sql);
});

test('a standard string ends at its quote: a backslash there is text, not an escape', () => {
  assert.equal(numberPlaceholders("SELECT 'a\\', ?"), "SELECT 'a\\', $1");
});

test('an unterminated string or comment swallows the rest (the server then names the syntax error)', () => {
  assert.equal(numberPlaceholders("SELECT 'open ?"), "SELECT 'open ?");
  assert.equal(numberPlaceholders('SELECT ? /* open ?'), 'SELECT $1 /* open ?');
});
