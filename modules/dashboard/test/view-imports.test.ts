/**
 * A module's dashboard views reach the shell only through `@talon/dashboard-kit`: a relative path into
 * modules/dashboard/app (or into another module) ties the view to the shell's file layout, which may change under it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const repo = path.resolve(import.meta.dirname, '..', '..', '..');
const viewFolders = ['modules', 'examples'].flatMap((root) =>
  readdirSync(path.join(repo, root))
    .map((name) => path.join(repo, root, name, 'dashboard'))
    .filter((dir) => existsSync(dir)),
);

/** Relative imports that leave the dashboard/ folder they are in. */
function leaving(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f))
    .flatMap((f) => {
      const file = path.join(dir, f);
      return ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((i) => i.fileName)
        .filter((spec) => spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(dir + path.sep))
        .map((spec) => `${path.relative(repo, file)}: ${spec}`);
    });
}

test('module views import the shell through @talon/dashboard-kit, never by a path out of their dashboard/ folder', () => {
  assert.ok(viewFolders.length > 10, `only ${viewFolders.length} dashboard/ folders found: the walk is broken`);
  assert.deepEqual(viewFolders.flatMap(leaving), []);
});
