/**
 * Module code and tests reach other modules only through `@talon/<name>` (declared in module.toml) and
 * build hooks with the SDK's classes: a relative import into another module bundles a copy of its code
 * that goes stale when the owner reloads, and a module's own tapable (a third party's node_modules may
 * hold another version) would not share the one copy the service runs on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import ts from 'typescript';

const repo = path.resolve(import.meta.dirname, '..');
/** The built-in modules and the examples a third party copies. */
const roots = ['modules', 'examples'].map((r) => path.join(repo, r));

interface Import {
  file: string;
  line: number;
  specifier: string;
  /** The nearest folder with a module.toml: the module the file belongs to. */
  moduleDir: string | undefined;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name.startsWith('.')) return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

const isInside = (p: string, dir: string) => p === dir || p.startsWith(dir + path.sep);

function moduleDirOf(file: string): string | undefined {
  for (let dir = path.dirname(file); roots.some((r) => isInside(dir, r)); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'module.toml'))) return dir;
  }
  return undefined;
}

/** Every import, export-from, import() and require() of a file; the scanner skips comments and strings. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const moduleDir = moduleDirOf(file);
  return importedFiles.map((f) => ({ file, line: text.slice(0, f.pos).split('\n').length, specifier: f.fileName, moduleDir }));
}

const imports = roots.filter((r) => existsSync(r)).flatMap((r) => tsFiles(r).flatMap(importsOf));
const where = (i: Import) => `${path.relative(repo, i.file)}:${i.line}`;

function assertNone(problems: string[], what: string): void {
  assert.ok(imports.length > 0, 'no imports found: the walk is broken');
  assert.deepEqual(problems, [], `${problems.length} ${what}:\n${problems.join('\n')}`);
}

test('no file imports across its module folder by a relative path', () => {
  const problems = imports.flatMap((i) => {
    if (!i.moduleDir) return [`${where(i)}: the file is not inside a module folder (no module.toml above it)`];
    if (!i.specifier.startsWith('.') && !path.isAbsolute(i.specifier)) return [];
    const target = path.resolve(path.dirname(i.file), i.specifier);
    if (isInside(target, i.moduleDir)) return [];
    const other = moduleDirOf(target);
    const fix = other ? `import its contract as @talon/${connectionsOf(other).name}` : 'a module sees only the SDK, declared contracts and npm packages';
    return [`${where(i)}: '${i.specifier}' leaves ${path.relative(repo, i.moduleDir)}; ${fix}`];
  });
  assertNone(problems, 'relative imports leave their module');
});

test('no module imports tapable: hook classes come from @talon/module-sdk', () => {
  const problems = imports.filter((i) => i.specifier === 'tapable' || i.specifier.startsWith('tapable/')).map((i) => `${where(i)}: imports '${i.specifier}'`);
  assertNone(problems, 'imports of tapable');
});

interface Connections {
  name: string;
  declared: Set<string>;
}

const manifests = new Map<string, Connections>();
function connectionsOf(moduleDir: string): Connections {
  let found = manifests.get(moduleDir);
  if (!found) {
    const m = parse(readFileSync(path.join(moduleDir, 'module.toml'), 'utf8')) as Record<string, unknown>;
    const list = (key: string) => (Array.isArray(m[key]) ? (m[key] as string[]) : []);
    // consumes names a whole module ('agents') or one of its services ('agents.registry').
    const consumed = list('consumes').map((c) => c.split('.')[0]);
    found = { name: String(m.name), declared: new Set([String(m.name), ...list('depends'), ...list('optional_depends'), ...consumed]) };
    manifests.set(moduleDir, found);
  }
  return found;
}

/** A file under the module's test/ folder: the one place the testing kit (@talon/testing) may be imported. */
const isTestFile = (i: Import) => i.moduleDir !== undefined && isInside(i.file, path.join(i.moduleDir, 'test'));

test('every @talon/<name> a module imports is declared in its module.toml', () => {
  const problems = imports.flatMap((i) => {
    if (!i.specifier.startsWith('@talon/') || !i.moduleDir) return [];
    const name = i.specifier.slice('@talon/'.length);
    if (name === 'module-sdk' || name.startsWith('module-sdk/')) return [];
    if (name === 'testing') return isTestFile(i) ? [] : [`${where(i)}: module code imports the testing kit (it runs a kernel); only test/ may`];
    const m = connectionsOf(i.moduleDir);
    if (m.declared.has(name)) return [];
    return [`${where(i)}: imports '${i.specifier}', but module '${m.name}' does not list '${name}' in depends, optional_depends or consumes`];
  });
  assertNone(problems, 'undeclared contract imports');
});

test('the SDK imports nothing of the kernel or the testing kit: the one arrow back up is the testing kit', () => {
  const problems = tsFiles(path.join(repo, 'module-sdk', 'src')).flatMap((file) =>
    importsOf(file)
      .filter((i) => /(^|\/)(kernel|testing-kit)\//.test(path.resolve(path.dirname(file), i.specifier)) || i.specifier === '@talon/testing')
      .map((i) => `${where(i)}: '${i.specifier}'`),
  );
  assertNone(problems, 'SDK imports of the kernel');
});
