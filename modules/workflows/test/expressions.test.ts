import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holds } from '../services/condition.ts';
import { render, seed } from '../services/template.ts';

test('conditions: case-insensitive substrings combined with ||, && and a leading !', () => {
  const out = 'Status: APPROVED by the editor';
  const cases: Array<[string, boolean]> = [
    ['', true],
    ['   ', true],
    ['approved', true],
    ['rejected', false],
    ['!rejected', true],
    ['!!approved', true],
    ['! approved', false],
    ['rejected || editor', true],
    ['approved && editor', true],
    ['approved && !editor', false],
    ['rejected || approved && editor', true],
    ['rejected || approved && author', false],
    ['approved ||', true],
    ['"by the"', true],
    ['"approved || x"', false],
    ["editor's", false],
  ];
  for (const [condition, expected] of cases) assert.equal(holds(condition, out), expected, condition);
  assert.equal(holds('"a || b"', 'we need a || b here'), true, 'operators inside double quotes are text');
  assert.equal(holds("can't || won't", "I won't do it"), true, 'apostrophes are plain text');
});

test('templates: one pass, unknown placeholders kept, values never expanded again', () => {
  const vars = new Map([
    ['input', 'the {{secret}} text'],
    ['secret', 'LEAK'],
  ]);
  assert.equal(render('A {{input}} B {{ secret }} C {{missing}}', vars), 'A the {{secret}} text B LEAK C {{missing}}');
  assert.deepEqual(seed('plain'), { input: 'plain', vars: new Map() });
  const seeded = seed('{"input": "go", "n": 2, "o": {"k": true}, "z": null}');
  assert.equal(seeded.input, 'go');
  assert.deepEqual(
    [...seeded.vars],
    [
      ['n', '2'],
      ['o', '{"k":true}'],
      ['z', ''],
    ],
  );
  assert.equal(seed('{"n": 1}').input, '{"n": 1}', 'without an input field, {{input}} is the whole text');
  assert.equal(seed('{broken').input, '{broken');
});
