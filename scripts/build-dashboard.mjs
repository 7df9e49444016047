#!/usr/bin/env node
// Builds the dashboard (modules/dashboard/app) into modules/dashboard/dist with Vite: run by `npm ci` (prepare),
// by the dashboard module at start when dist/ is missing, and by hand. The output is never committed (.gitignore).
// It builds into a fresh folder and renames it into place, so a service serving the old build, or a second build
// running at the same time, never sees a half-written folder.
import { existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const appDir = fileURLToPath(new URL('../modules/dashboard/app/', import.meta.url));
const dist = path.resolve(appDir, '../dist');
const staging = `${dist}.tmp-${process.pid}`;

const { build } = await import('vite');
const { default: config } = await import(pathToFileURL(path.join(appDir, 'vite.config.mjs')).href);
const started = Date.now();
try {
  await build({ ...config, configFile: false, logLevel: 'warn', build: { ...config.build, outDir: staging } });
  const old = `${dist}.old-${process.pid}`;
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(staging, dist);
  rmSync(old, { recursive: true, force: true });
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  throw err;
}
console.log(`dashboard built into ${path.relative(process.cwd(), dist) || dist} in ${Date.now() - started} ms`);
