/**
 * Modules bring their own npm packages (docs/modules.md, "Packages of a module"): a package that one module loads is
 * declared in that module's package.json (an npm workspace of the root, installed by the root's `npm ci`), so a
 * channel SDK never becomes every module's dependency. The root's package.json holds what the kernel, the SDK, the
 * testing kit, the scripts and several modules need. npm hoists workspace packages into the root's node_modules, so
 * an undeclared import would still run here: these tests are what keeps each import declared where it belongs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const repo = path.resolve(import.meta.dirname, '..');
const modulesDir = path.join(repo, 'modules');

interface PackageJson {
  name?: string;
  private?: boolean;
  type?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readPackage = (dir: string): PackageJson | undefined =>
  existsSync(path.join(dir, 'package.json')) ? (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson) : undefined;
/** What runs in the service: dependencies and optional ones (a native addon that may fail to build). */
const runtimeOf = (p: PackageJson | undefined) => new Set([...Object.keys(p?.dependencies ?? {}), ...Object.keys(p?.optionalDependencies ?? {})]);
const everyOf = (p: PackageJson | undefined) => new Set([...runtimeOf(p), ...Object.keys(p?.devDependencies ?? {})]);

const root = readPackage(repo)!;
const moduleNames = readdirSync(modulesDir).filter((d) => existsSync(path.join(modulesDir, d, 'module.toml')));
const modulePackages = new Map(
  moduleNames.flatMap((name) => {
    const pkg = readPackage(path.join(modulesDir, name));
    return pkg ? [[name, pkg] as const] : [];
  }),
);

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : SOURCE.test(e.name) ? [p] : [];
  });
}

interface Use {
  file: string;
  line: number;
  specifier: string;
  /** Erased when compiled (`import type`, `typeof import('x')`): its types may come from a devDependency. */
  typeOnly: boolean;
}

const stringArg = (node: ts.Expression | undefined) => (node && ts.isStringLiteralLike(node) ? node.text : undefined);

/**
 * The packages a file names: imports and exports from, import(), require(), and the ones loaded or located from the
 * file itself by hand: lazyRequire(import.meta.url, 'x'), createRequire(import.meta.url)('x') and its .resolve('x').
 * (Anchored elsewhere, a name resolves from another package's folder: dev-typecheck uses the service's TypeScript.)
 */
function usesOf(file: string): Use[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const uses: Use[] = [];
  const add = (node: ts.Node, specifier: string | undefined, typeOnly: boolean) => {
    if (specifier) uses.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, specifier, typeOnly });
  };
  const isHere = (node: ts.Expression | undefined) => node?.getText(source) === 'import.meta.url';
  const isCreateRequire = (node: ts.Expression) =>
    ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'createRequire' && isHere(node.arguments[0]);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = Boolean(clause?.isTypeOnly || (!clause?.name && named?.length && named.every((e) => e.isTypeOnly)));
      add(node, stringArg(node.moduleSpecifier), typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node, stringArg(node.moduleSpecifier), node.isTypeOnly);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, stringArg(node.argument.literal as ts.Expression), true);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) add(node, stringArg(node.arguments[0]), false);
      else if (ts.isIdentifier(callee) && callee.text === 'require') add(node, stringArg(node.arguments[0]), false);
      else if (ts.isIdentifier(callee) && callee.text === 'lazyRequire' && isHere(node.arguments[0])) add(node, stringArg(node.arguments[1]), false);
      else if (isCreateRequire(callee)) add(node, stringArg(node.arguments[0]), false);
      else if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'resolve' && isCreateRequire(callee.expression))
        add(node, stringArg(node.arguments[0]), false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

const builtins = new Set(builtinModules);
/** The npm package a specifier names, or undefined for a path, a Node built-in or a Talon contract. */
function packageOf(specifier: string): string | undefined {
  if (/^[./]/.test(specifier) || specifier.includes(':') || specifier.startsWith('@talon/')) return undefined;
  const name = specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
  return builtins.has(name) ? undefined : name;
}

/** Types of a package may come from the package or from @types/<name> (scoped: @types/scope__name). */
const typesOf = (pkg: string) => `@types/${pkg.startsWith('@') ? pkg.slice(1).replace('/', '__') : pkg}`;
const declares = (set: Set<string>, pkg: string, typeOnly: boolean) => set.has(pkg) || (typeOnly && set.has(typesOf(pkg)));
const where = (u: Use) => `${path.relative(repo, u.file)}:${u.line}`;

function assertNone(problems: string[], what: string, checked: number): void {
  assert.ok(checked > 0, 'nothing was checked: the walk is broken');
  assert.deepEqual(problems, [], `${problems.length} ${what}:\n${problems.join('\n')}`);
}

test('every package a module imports is declared in its own package.json or the root one, not only by another module', () => {
  let checked = 0;
  const problems = moduleNames.flatMap((name) => {
    const dir = path.join(modulesDir, name);
    const own = modulePackages.get(name);
    return sourceFiles(dir).flatMap((file) =>
      usesOf(file).flatMap((u) => {
        const pkg = packageOf(u.specifier);
        if (!pkg) return [];
        checked++;
        // Tests and erased type imports may use devDependencies; what the service loads may not.
        const lenient = u.typeOnly || file.startsWith(path.join(dir, 'test') + path.sep);
        const allowed = lenient ? [everyOf(own), everyOf(root)] : [runtimeOf(own), runtimeOf(root)];
        if (allowed.some((set) => declares(set, pkg, u.typeOnly))) return [];
        const owners = [...modulePackages].filter(([other, p]) => other !== name && everyOf(p).has(pkg)).map(([other]) => other);
        const fix = everyOf(own).has(pkg)
          ? 'it is only a devDependency there: the service loads it, so move it to dependencies'
          : owners.length
            ? `only ${owners.map((o) => `modules/${o}`).join(', ')} declare it: declare it in modules/${name}/package.json too (a test's use: devDependencies), or at the root if several modules load it`
            : `declare it in modules/${name}/package.json (npm install --workspace modules/${name} ${pkg})`;
        return [`${where(u)}: imports '${u.specifier}', declared in neither modules/${name}/package.json nor the root's; ${fix}`];
      }),
    );
  });
  assertNone(problems, 'undeclared package imports in modules', checked);
});

test("the kernel, SDK, testing kit, scripts, bench and the root's tests import only the root's packages", () => {
  let checked = 0;
  const dirs = ['bin', 'kernel', 'module-sdk/src', 'testing-kit/src', 'scripts', 'bench', 'test'];
  const problems = dirs.flatMap((d) =>
    sourceFiles(path.join(repo, d))
      // Fixture modules stand for third-party modules; test/support is the tests' own code.
      .filter((file) => !file.includes(`${path.sep}fixtures${path.sep}`))
      .flatMap((file) =>
        usesOf(file).flatMap((u) => {
          const pkg = packageOf(u.specifier);
          if (!pkg) return [];
          checked++;
          // Only bench/ and test/ may use devDependencies (they do not run in the service).
          const lenient = u.typeOnly || /^(bench|test)\//.test(path.relative(repo, file));
          return declares(lenient ? everyOf(root) : runtimeOf(root), pkg, u.typeOnly)
            ? []
            : [`${where(u)}: imports '${u.specifier}', not in the root package.json's ${lenient ? 'dependencies or devDependencies' : 'dependencies'}`];
        }),
      ),
  );
  assertNone(problems, 'undeclared package imports outside modules', checked);
});

test('a module package.json is a private workspace named @talon-module/<name>, installed by the lockfile', () => {
  const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { name?: string }> };
  const problems = [...modulePackages].flatMap(([name, pkg]) => {
    const wrong: string[] = [];
    if (pkg.name !== `@talon-module/${name}`) wrong.push(`is named '${pkg.name}', not '@talon-module/${name}' (@talon/${name} is its contract)`);
    if (pkg.private !== true) wrong.push('is not private (a module is not published on its own)');
    if (pkg.type !== 'module') wrong.push(`has type '${pkg.type}': its TypeScript is ES modules, so "type": "module"`);
    if (lock.packages[`modules/${name}`]?.name !== pkg.name)
      wrong.push('is not in package-lock.json: run npm install at the root (the root workspaces take modules/*)');
    return wrong.map((w) => `modules/${name}/package.json ${w}`);
  });
  assertNone(problems, 'module package.json problems', modulePackages.size);
});

test('a package the service loads is declared once: by the one module that loads it, or at the root', () => {
  const problems = [...modulePackages].flatMap(([name, pkg]) =>
    [...runtimeOf(pkg)].flatMap((dep) => {
      const also = [...modulePackages].filter(([other, p]) => other !== name && runtimeOf(p).has(dep)).map(([other]) => `modules/${other}`);
      if (runtimeOf(root).has(dep)) also.push('the root');
      return also.length
        ? [`'${dep}' is a dependency of modules/${name} and of ${also.join(', ')}: a package several load belongs in the root package.json only`]
        : [];
    }),
  );
  assertNone(problems, 'packages declared twice', modulePackages.size);
});
