/**
 * The kernel stays small enough to read in one sitting (issue 9): every line of kernel/, comments and blank lines
 * included, at most 2,000. Product behaviour belongs in a module, the CLI in bin/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

test('kernel/ has at most 2,000 lines', () => {
  const files = readdirSync('kernel', { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  const lines = files.map((f) => readFileSync(path.join(f.parentPath, f.name), 'utf8').split('\n').length - 1);
  const total = lines.reduce((a, b) => a + b, 0);
  assert.ok(total <= 2000, `kernel/ has ${total} lines; move product behaviour into a module`);
});
