/**
 * docs/configuration.md describes every built-in module's connections; the manifests are the truth. This test reads
 * both, so a module added, removed or re-wired without its row, its entry or the critical list changing fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';

const repo = path.resolve(import.meta.dirname, '..');
const doc = readFileSync(path.join(repo, 'docs/configuration.md'), 'utf8');

interface Manifest {
  name: string;
  depends?: string[];
  optional_depends?: string[];
  consumes?: string[];
  critical?: boolean;
  all_events?: boolean;
  config_section?: string;
  config_keys?: string[];
}

const manifests = new Map<string, Manifest>(
  readdirSync(path.join(repo, 'modules'))
    .map((dir) => path.join(repo, 'modules', dir, 'module.toml'))
    .filter((file) => existsSync(file))
    .map((file) => parse(readFileSync(file, 'utf8')) as unknown as Manifest)
    .map((m) => [m.name, m]),
);

/** The names written in backticks, in order, brackets dropped (`[[mcp_servers]]` is the key mcp_servers). */
const inOrder = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/^\[+|\]+$/g, ''));
const names = (text: string): string[] => inOrder(text).sort();
const sorted = (list: string[] | undefined): string[] => [...(list ?? [])].sort();

/** Modules that cannot run without `name`: its hard dependants, directly or through others. */
function blockedBy(name: string): string[] {
  const found = new Set<string>();
  const visit = (of: string) => {
    for (const m of manifests.values())
      if (m.depends?.includes(of) && !found.has(m.name)) {
        found.add(m.name);
        visit(m.name);
      }
  };
  visit(name);
  return [...found].sort();
}

/** The lines of the markdown block starting with `first` and running to the next blank line. */
function block(first: string): string[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => l.startsWith(first));
  assert.notEqual(start, -1, `docs/configuration.md has no line starting '${first}'`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start, end === -1 ? undefined : end);
}

const rows = block('| module | what it does | depends on | blocked when disabled | section |')
  .slice(2)
  .map((line) => {
    const cells = line.split('|').slice(1, -1);
    assert.equal(cells.length, 5, `module table row has ${cells.length} cells, not 5: ${line}`);
    const [module] = inOrder(cells[0]);
    return { module, depends: names(cells[2]), blocked: names(cells[3]), section: names(cells[4]) };
  });

test('the module table has one row per module under modules/, and no other', () => {
  const listed = rows.map((r) => r.module);
  assert.deepEqual(
    listed.filter((n, i) => listed.indexOf(n) !== i),
    [],
    'modules with two rows',
  );
  assert.deepEqual([...manifests.keys()].filter((n) => !listed.includes(n)).sort(), [], 'modules without a row');
  assert.deepEqual(
    listed.filter((n) => !manifests.has(n)),
    [],
    'rows naming no module',
  );
});

test("each row's depends on, blocked when disabled and section match the module's manifest", () => {
  for (const row of rows) {
    const m = manifests.get(row.module);
    if (!m) continue; // reported by the test above
    assert.deepEqual(row.depends, sorted(m.depends), `${row.module}: 'depends on' differs from its depends`);
    assert.deepEqual(row.blocked, blockedBy(row.module), `${row.module}: 'blocked when disabled' differs`);
    const section = sorted([...(m.config_section ? [m.config_section] : []), ...(m.config_keys ?? [])]);
    assert.deepEqual(row.section, section, `${row.module}: 'section' differs from config_section and config_keys`);
  }
});

test('the list of security modules is the modules with critical = true', () => {
  const list = doc.match(/`critical = true` in their `module\.toml`: ([^)]*)\)/);
  assert.ok(list, 'docs/configuration.md has no list of the security modules');
  const critical = [...manifests.values()].filter((m) => m.critical).map((m) => m.name);
  assert.deepEqual(names(list[1]), critical.sort());
});

test('the optional dependencies and further uses match optional_depends, consumes and all_events', () => {
  const text = block('Optional dependencies').join(' ');
  const perModule = text.slice(text.indexOf('Per module: ') + 'Per module: '.length).replace(/\.$/, '');
  const entries = new Map(
    perModule.split('; ').map((entry) => {
      const [before, uses = ''] = entry.split(' uses ');
      const [module, ...optional] = inOrder(before);
      return [module, { optional: optional.sort(), consumes: names(uses), all: uses.includes('all events') }];
    }),
  );
  const expected = new Map(
    [...manifests.values()]
      .filter((m) => m.optional_depends?.length || m.consumes?.length || m.all_events)
      .map((m) => [m.name, { optional: sorted(m.optional_depends), consumes: sorted(m.consumes), all: m.all_events === true }]),
  );
  assert.deepEqual(
    [...entries.keys()].sort(),
    [...expected.keys()].sort(),
    'modules with an entry differ from those with optional_depends, consumes or all_events',
  );
  for (const [module, want] of expected) assert.deepEqual(entries.get(module), want, `${module}'s entry differs`);
});
