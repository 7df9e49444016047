#!/usr/bin/env node
// `npm start`: runs the daemon from a CommonJS build of bin/talon.ts (the SDK bundled in, npm packages
// required directly), so no TypeScript loader runs in production. The build is made by `npm ci` (prepare)
// and again here whenever one of its source files changed. `npm run dev` and the tests run the sources with tsx.
// Its CommonJS (the build, npm packages, module bundles) compiles through a V8 code cache (code-cache.mjs).
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeCacheFile, useCodeCache } from './code-cache.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'node_modules', '.cache', 'talon', 'main.cjs');
const record = `${out}.json`;

function fresh() {
  try {
    const { inputs } = JSON.parse(readFileSync(record, 'utf8'));
    return inputs.every((i) => {
      const st = statSync(i.file, { throwIfNoEntry: false });
      return st?.size === i.size && st.mtimeMs === i.mtimeMs;
    });
  } catch {
    return false;
  }
}

async function build() {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'bin', 'talon.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    packages: 'external',
    // The SDK is TypeScript: bundled in, it is the one instance modules are handed.
    alias: { '@talon/module-sdk': path.join(root, 'module-sdk', 'src', 'index.ts') },
    // The build lives elsewhere: import.meta.url keeps meaning bin/talon.ts (modules/ and node_modules are found from it).
    banner: { js: `var __talon_import_meta_url = ${JSON.stringify(pathToFileURL(path.join(root, 'bin', 'talon.ts')).href)};` },
    define: { 'import.meta.url': '__talon_import_meta_url' },
    supported: { 'dynamic-import': false },
    sourcemap: 'inline',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  // This script is an input too: a change of its build options makes a new build.
  const inputs = [...Object.keys(result.metafile.inputs).map((p) => path.resolve(root, p)), fileURLToPath(import.meta.url)].map((file) => ({
    file,
    ...pick(statSync(file)),
  }));
  mkdirSync(path.dirname(record), { recursive: true });
  writeFileSync(`${record}.tmp`, JSON.stringify({ inputs }));
  renameSync(`${record}.tmp`, record);
}

const pick = (st) => ({ size: st.size, mtimeMs: st.mtimeMs });

if (!fresh()) await build();
if (process.argv.includes('--build-only')) process.exit(0);
useCodeCache(codeCacheFile(path.dirname(out)));
createRequire(import.meta.url)(out);
