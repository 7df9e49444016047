#!/usr/bin/env node
// Builds the dashboard (the shell, modules/dashboard/app, and the views of every built-in module) into
// modules/dashboard/dist with Vite: run by `npm ci` (prepare), by the dashboard module at start when dist/ is missing,
// and by hand. The output is never committed (.gitignore). `--module <folder>` (repeated) adds a third-party module's
// views and `--out <folder>` builds elsewhere: the dashboard module does both, into its data folder, when a running
// third-party module declares views the build lacks (modules/dashboard/services/coverage.ts).
// It builds into a fresh folder and renames it into place, so a service serving the old build, or a second build
// running at the same time (another node of a fleet building into the shared data directory), never sees a
// half-written folder; when two builds finish together, the one placed first stays (they are the same build). The
// gzip and brotli forms of the assets are made here, once, into dist/compressed/ (the service reads them at start
// instead of compressing at every start).
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const { values: args } = parseArgs({ options: { module: { type: 'string', multiple: true, default: [] }, out: { type: 'string' } } });
const appDir = fileURLToPath(new URL('../modules/dashboard/app/', import.meta.url));
const dist = args.out ? path.resolve(args.out) : path.resolve(appDir, '../dist');
const staging = `${dist}.tmp-${randomUUID()}`;

// Vite is the dashboard module's package (modules/dashboard/package.json): found from its folder, not from scripts/.
const { build } = await import(pathToFileURL(createRequire(appDir).resolve('vite')).href);
const { dashboardConfig } = await import(pathToFileURL(path.join(appDir, 'vite.config.mjs')).href);
const config = dashboardConfig({ extraModuleDirs: args.module.map((m) => path.resolve(m)) });
mkdirSync(path.dirname(dist), { recursive: true });
const started = Date.now();
try {
  await build({ ...config, configFile: false, logLevel: 'warn', build: { ...config.build, outDir: staging } });
  precompress(staging);
  place(staging, dist);
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  throw err;
}

/** Renames the new build into place; the old one goes once it is out of the way. */
function place(from, to) {
  const old = `${to}.old-${randomUUID()}`;
  try {
    renameSync(to, old);
  } catch (err) {
    // No build there yet, or another build just moved it away.
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    renameSync(from, to);
  } catch (err) {
    // Another build was placed in between: it is as new as this one, which goes.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    rmSync(from, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
}

/** What modules/dashboard/services/assets.ts serves compressed: these types, from 512 bytes on. */
function precompress(out) {
  const target = path.join(out, 'compressed');
  mkdirSync(target);
  for (const name of readdirSync(path.join(out, 'assets'))) {
    const body = readFileSync(path.join(out, 'assets', name));
    if (!/\.(js|css|svg|json|html)$/.test(name) || body.length < 512) continue;
    writeFileSync(path.join(target, `${name}.gz`), gzipSync(body, { level: 9 }));
    writeFileSync(path.join(target, `${name}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
}

console.log(`dashboard built into ${path.relative(process.cwd(), dist) || dist} in ${Date.now() - started} ms`);
