/**
 * One layout for every module (issue 25, item 6), so that a newcomer finds a module's parts where the last one had
 * them: its config schema in `config.ts` at the module root, and the data it ships (catalogues, rules, templates) in
 * `bundled/`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const modules = readdirSync('modules', { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join('modules', d.name, 'index.ts')))
  .map((d) => d.name);

/** The names a file imports from one specifier (`import { a, type B as C } from './x.ts'` → a, C). */
function importedFrom(source: string, specifier: string): Set<string> {
  const names = new Set<string>();
  const escaped = specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  for (const m of source.matchAll(new RegExp(`import\\s*(?:type\\s*)?\\{([^}]*)\\}\\s*from\\s*'${escaped}'`, 'g')))
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  return names;
}

/**
 * The identifiers defineModule is given as `configSchema` and `configKeys`: `configSchema: x`, the shorthand
 * `configSchema,`, and each value of `configKeys: { key: x }`.
 */
function schemaIdentifiers(index: string): string[] {
  const found: string[] = [];
  for (const m of index.matchAll(/\bconfig(?:Schema|Keys)\b\s*(?::\s*(\{[^}]*\}|[A-Za-z_$][\w$]*))?\s*[,\n}]/g)) {
    const value = m[1];
    if (value === undefined) found.push(m[0].startsWith('configSchema') ? 'configSchema' : 'configKeys');
    else if (value.startsWith('{')) found.push(...[...value.matchAll(/:\s*([A-Za-z_$][\w$]*)/g)].map((v) => v[1]));
    else found.push(value);
  }
  return found;
}

test("a module's config schema is declared only in its root config.ts", () => {
  const wrong: string[] = [];
  for (const name of modules) {
    const dir = path.join('modules', name);
    if (existsSync(path.join(dir, 'services', 'config.ts'))) wrong.push(`${dir}/services/config.ts: move it to ${dir}/config.ts`);
    const index = readFileSync(path.join(dir, 'index.ts'), 'utf8');
    const fromConfig = importedFrom(index, './config.ts');
    for (const id of schemaIdentifiers(index))
      if (!fromConfig.has(id)) wrong.push(`${dir}/index.ts: its config schema '${id}' is not imported from ./config.ts`);
  }
  assert.deepEqual(wrong, []);
});

test('the layout check sees the ways a module hands over its schema', () => {
  const index = `import { aSchema, type A, bSchema as b } from './config.ts';
defineModule<A>({
  configSchema: aSchema,
  configKeys: { one: b, two: inline },
});
defineModule({ configSchema, register() {} });`;
  assert.deepEqual(schemaIdentifiers(index), ['aSchema', 'b', 'inline', 'configSchema']);
  assert.deepEqual([...importedFrom(index, './config.ts')], ['aSchema', 'A', 'b']);
});

/** Files that are content, not code: what a module ships as data. */
const DATA_FILE = /\.(toml|json|ya?ml|md|txt|csv)$/;
/** Folders with a fixed role, whatever they hold. */
const ROLE_FOLDERS = new Set(['bundled', 'test', 'migrations', 'dashboard', 'node_modules', 'dist', 'app', 'routes', 'services']);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile())
    .map((f) => f.name);
}

test('a folder of shipped data is named bundled/', () => {
  const wrong: string[] = [];
  for (const name of modules) {
    const dir = path.join('modules', name);
    for (const sub of readdirSync(dir, { withFileTypes: true })) {
      if (!sub.isDirectory() || ROLE_FOLDERS.has(sub.name)) continue;
      const files = filesUnder(path.join(dir, sub.name));
      if (files.length > 0 && files.every((f) => DATA_FILE.test(f))) wrong.push(`${dir}/${sub.name}/: only data files; name it bundled/`);
    }
  }
  assert.deepEqual(wrong, []);
});
