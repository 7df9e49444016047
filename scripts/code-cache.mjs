// A V8 code cache for the CommonJS that `npm start` compiles: the kernel's build, the npm packages and the module bundles.
// Node 20 compiles every file from its text at each start and compiles each function again on its first call; here each
// file is compiled with the bytecode V8 made for it in an earlier run, taken after start-up, so the functions start-up ran
// come compiled (Node 22's module.enableCompileCache does the like, at exit only). Entries are keyed by file name and
// content, so an edited file or a new package version compiles afresh; V8 refuses data of another V8 version or flags.
// See docs/decisions.md.
import Module from 'node:module';
import vm from 'node:vm';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const FORMAT = 'talon-code-cache/1';
/**
 * Scripts compiled this long after the cache is installed are recorded for the next run's cache: start-up and the first
 * requests. Later ones (a module switched on at run time, a package a rare request loads) are not held until exit.
 */
const RECORD_FOR_MS = 60_000;

/**
 * The entries of `file` (none when it is missing, unreadable or of another format), each read from disk when taken: the
 * process never holds the whole file (it held 3 MB of idle memory a few seconds after start-up).
 */
function openCache(file) {
  const where = new Map();
  let fd;
  try {
    fd = openSync(file, 'r');
    const length = Buffer.alloc(4);
    readSync(fd, length, 0, 4, 0);
    const header = JSON.parse(readBytes(fd, length.readUInt32LE(0), 4).toString('utf8'));
    if (header.format !== FORMAT || header.node !== process.version) throw new Error('another format');
    let offset = 4 + length.readUInt32LE(0);
    for (const [key, size] of header.entries) {
      where.set(key, [offset, size]);
      offset += size;
    }
  } catch {
    // no usable cache: every file compiles from its text, as without one
    where.clear();
  }
  const close = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    where.clear();
  };
  /** The entry of `key`, once. */
  const take = (key) => {
    const at = where.get(key);
    if (!at || fd === undefined) return undefined;
    where.delete(key);
    try {
      return readBytes(fd, at[1], at[0]);
    } catch {
      return undefined;
    }
  };
  return { take, close };
}

function readBytes(fd, length, position) {
  const buffer = Buffer.allocUnsafe(length);
  if (readSync(fd, buffer, 0, length, position) !== length) throw new Error('cache file cut short');
  return buffer;
}

function writeCache(file, entries) {
  const header = Buffer.from(JSON.stringify({ format: FORMAT, node: process.version, entries: [...entries].map(([key, data]) => [key, data.length]) }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.concat([length, header, ...entries.values()]));
  renameSync(tmp, file);
}

/**
 * The cache file in `dir` for this Node and its flags: V8 refuses data made under other flags, so runs with other flags
 * (tests, profiling) keep a file of their own instead of replacing each other's.
 */
export function codeCacheFile(dir) {
  const flags = createHash('sha1').update(`${process.version} ${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
  return path.join(dir, `code-cache-${flags.digest('hex').slice(0, 12)}.bin`);
}

/** Node's own `require` of a module, as makeRequireFunction builds it. */
function requireFor(mod) {
  const require = (id) => mod.require(id);
  const resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

/**
 * Compiles CommonJS through the cache in `file` from now on. The cache is written at exit, and only when this run compiled
 * a file it did not hold (or held for another build of V8): never while the service runs (making it for every file took
 * 140 ms of one event-loop turn). Off when Node's source maps are on (`--enable-source-maps`): scripts compiled this way
 * are not source-mapped in Node 20.
 */
export function useCodeCache(file) {
  if (process.sourceMapsEnabled) return { stats: () => undefined };
  const stored = openCache(file);
  /** This run's scripts by key, and whether stored data served each one. */
  const compiled = new Map();
  const stats = { hits: 0, misses: 0, rejected: 0 };
  const recordUntil = performance.now() + RECORD_FOR_MS;
  const original = Module.prototype._compile;
  Module.prototype._compile = function (content, filename, format) {
    if (format === 'module') return original.call(this, content, filename, format);
    const key = createHash('sha1').update(filename).update('\0').update(content).digest('base64url');
    const cachedData = stored.take(key);
    let script;
    try {
      script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    } catch {
      // Not plain CommonJS (ES module syntax in a .js file, a syntax error): Node's own path decides and reports.
      return original.call(this, content, filename, format);
    }
    const served = cachedData !== undefined && !script.cachedDataRejected;
    stats[served ? 'hits' : cachedData ? 'rejected' : 'misses']++;
    if (performance.now() < recordUntil) compiled.set(key, { script, served });
    const wrapper = script.runInThisContext({ displayErrors: true });
    return Reflect.apply(wrapper, this.exports, [this.exports, requireFor(this), this, filename, path.dirname(filename)]);
  };
  process.once('exit', () => {
    stored.close();
    if ([...compiled.values()].every((c) => c.served)) return;
    try {
      // The bytecode of every function compiled by now, start-up's included; what this run did not load is dropped.
      writeCache(file, new Map([...compiled].map(([key, c]) => [key, c.script.createCachedData()])));
    } catch {
      // a cache that cannot be written only costs the next start its speed
    }
  });
  return { stats: () => ({ ...stats }) };
}
