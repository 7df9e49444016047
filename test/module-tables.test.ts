/**
 * Every module shares one SQLite database, so each names what its migrations create `<module>_...`
 * ('-' as '_'): two modules can then never take the same name. FTS5 shadow tables take the name of
 * their virtual table, so checking the names written in the SQL covers them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';

const repo = path.resolve(import.meta.dirname, '..');

/** Folders with a module.toml under the built-in modules and the examples (fixture modules included). */
function moduleDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const here = existsSync(path.join(dir, 'module.toml')) ? [dir] : [];
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.'))
    .flatMap((e) => moduleDirs(path.join(dir, e.name)));
  return [...here, ...below];
}

/** The SQL without its comments; quoted text is kept as it is (a '--' inside a string is no comment). */
function withoutComments(sql: string): string {
  let out = '';
  for (let i = 0; i < sql.length;) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let end = sql.indexOf(close, i + 1);
      // A doubled quote inside a quoted text is an escaped quote.
      while (end !== -1 && close !== ']' && sql[end + 1] === close) end = sql.indexOf(close, end + 2);
      end = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, end);
      i = end;
    } else if (sql.startsWith('--', i)) {
      i = sql.indexOf('\n', i) === -1 ? sql.length : sql.indexOf('\n', i);
    } else if (sql.startsWith('/*', i)) {
      i = sql.indexOf('*/', i) === -1 ? sql.length : sql.indexOf('*/', i) + 2;
      out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|\`[^\`]+\`|\[[^\]]+\]|'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_$]*)`;
const CREATE = new RegExp(
  String.raw`\bCREATE\s+(?:TEMP(?:ORARY)?\s+)?(?:UNIQUE\s+)?(VIRTUAL\s+TABLE|TABLE|INDEX|TRIGGER|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:${IDENT}\s*\.\s*)?(${IDENT})`,
  'gi',
);
// A renamed table takes a new name, which must carry the prefix too (RENAME COLUMN does not match).
const RENAME = new RegExp(String.raw`\bALTER\s+TABLE\s+(?:${IDENT}\s*\.\s*)?${IDENT}\s+RENAME\s+TO\s+(${IDENT})`, 'gi');

const unquote = (name: string) => (/^["'`[]/.test(name) ? name.slice(1, -1).replace(/""|''/g, (q) => q[0]) : name);

interface Created {
  file: string;
  kind: string;
  name: string;
  prefix: string;
}

/** What each migration file creates, with the prefix its module owes. */
function created(): Created[] {
  return ['modules', 'examples']
    .flatMap((r) => moduleDirs(path.join(repo, r)))
    .flatMap((dir) => {
      const migrations = path.join(dir, 'migrations');
      if (!existsSync(migrations)) return [];
      const name = String((parse(readFileSync(path.join(dir, 'module.toml'), 'utf8')) as { name?: unknown }).name);
      const prefix = `${name.replace(/-/g, '_')}_`;
      return readdirSync(migrations)
        .filter((f) => f.endsWith('.sql'))
        .flatMap((f) => {
          const file = path.join(migrations, f);
          const sql = withoutComments(readFileSync(file, 'utf8'));
          return [
            ...[...sql.matchAll(CREATE)].map((m) => ({ kind: m[1].replace(/\s+/g, ' ').toLowerCase(), name: unquote(m[2]) })),
            ...[...sql.matchAll(RENAME)].map((m) => ({ kind: 'table (renamed)', name: unquote(m[1]) })),
          ].map((c) => ({ ...c, file: path.relative(repo, file), prefix }));
        });
    });
}

test('the parser finds names in the forms SQLite accepts, and skips comments', () => {
  const sql = withoutComments(`-- CREATE TABLE in_a_comment (x);
    /* CREATE INDEX nor_here ON t (x); */
    CREATE TABLE IF NOT EXISTS "a_quoted" (note TEXT DEFAULT '-- not a comment');
    create unique index main.[b_bracketed] on a_quoted (note);
    CREATE VIRTUAL TABLE c_fts USING fts5 (note);
    CREATE TEMP VIEW \`d_view\` AS SELECT 1;
    CREATE TRIGGER e_trig AFTER INSERT ON a_quoted BEGIN SELECT 1; END;
    ALTER TABLE a_quoted RENAME COLUMN note TO body;
    ALTER TABLE a_quoted RENAME TO f_renamed;`);
  const names = [...[...sql.matchAll(CREATE)].map((m) => unquote(m[2])), ...[...sql.matchAll(RENAME)].map((m) => unquote(m[1]))];
  assert.deepEqual(names, ['a_quoted', 'b_bracketed', 'c_fts', 'd_view', 'e_trig', 'f_renamed']);
});

test("every table, index, trigger and view a module's migrations create is prefixed with the module's name", () => {
  const all = created();
  assert.ok(all.length > 0, 'no CREATE statement found in any migration: the walk is broken');
  const problems = all.filter((c) => !c.name.toLowerCase().startsWith(c.prefix)).map((c) => `${c.file}: ${c.kind} '${c.name}' is not named ${c.prefix}...`);
  assert.deepEqual(problems, [], `${problems.length} names without their module's prefix:\n${problems.join('\n')}`);
});

/** Every file under a folder (fixtures included), as paths. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? (e.name === 'node_modules' ? [] : filesUnder(p)) : /\.(ts|mjs|js|sql)$/.test(e.name) ? [p] : [];
  });
}

/** The name as SQL uses a table (a manifest field or a config key may share it: mcp_servers). */
const sqlNaming = (table: string) => new RegExp(String.raw`\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+["\`[]?${table}\b`, 'i');

test('a table is found where SQL uses it, not where a word shares its name', () => {
  const uses = ['SELECT * FROM mcp_servers', 'delete from "mcp_servers" where id = ?', 'INSERT INTO mcp_servers VALUES (1)', 'UPDATE mcp_servers SET x = 1'];
  assert.deepEqual(
    uses.map((u) => sqlNaming('mcp_servers').test(u)),
    [true, true, true, true],
  );
  assert.equal(sqlNaming('mcp_servers').test('mcp_servers = ["memory"]'), false);
});

test("a module's tests name no other module's table: they read and change its data through its API", () => {
  const builtIn = path.join(repo, 'modules');
  const owners = created().filter((c) => path.relative(builtIn, c.file).split(path.sep).length === 3); // modules/<name>/migrations/<file>
  assert.ok(owners.length > 0, 'no table found: the walk is broken');
  const problems = readdirSync(builtIn).flatMap((name) => {
    const prefix = `${name.replace(/-/g, '_')}_`;
    // A migration that hands tables over to another module names them, and so may the tests of that hand-over.
    const migrations = filesUnder(path.join(builtIn, name, 'migrations'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const foreign = owners.filter((c) => c.prefix !== prefix && !new RegExp(`\\b${c.name}\\b`, 'i').test(migrations));
    return filesUnder(path.join(builtIn, name, 'test')).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return foreign.filter((c) => sqlNaming(c.name).test(text)).map((c) => `${path.relative(repo, file)} names ${c.name} (${c.file})`);
    });
  });
  assert.deepEqual([...new Set(problems)], [], `tests reaching into another module's tables:\n${problems.join('\n')}`);
});
