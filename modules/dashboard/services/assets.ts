/**
 * The built app held in memory: index.html and every hashed asset, with their gzip and brotli forms (the service has
 * no compression layer, and the budget is counted compressed). The build makes those forms (dist/compressed/); a
 * build without them is compressed here, at the first request that asks. Asset names carry a content hash, so they
 * can be cached for a year; index.html is never cached, so a new build is picked up at once.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export interface Asset {
  type: string;
  body: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

export interface Bundle {
  index: Asset;
  /** Files under assets/, by name. */
  assets: Map<string, Asset>;
  builtAt: Date;
  /** The views the build holds (views.json, written by app/vite.config.mjs). */
  manifest: BuildManifest;
}

export interface BuildManifest {
  views: { module: string; id: string }[];
  /** A fingerprint of each module's dashboard/ folder when it was built (view-declarations.mjs, dashboardStamp). */
  stamps: Record<string, string>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

const readIfThere = (file: string) => (existsSync(file) ? readFileSync(file) : undefined);

/** An asset whose compressed forms come from the build's dist/compressed/, or are made when first asked for. */
function asset(file: string, compressed?: string): Asset {
  const ext = path.extname(file);
  const type = TYPES[ext] ?? 'application/octet-stream';
  const body = readFileSync(file);
  if (!COMPRESSIBLE.has(ext) || body.length < 512) return { type, body };
  const base = compressed ? path.join(compressed, path.basename(file)) : undefined;
  let gzip = base ? readIfThere(`${base}.gz`) : undefined;
  let br = base ? readIfThere(`${base}.br`) : undefined;
  return {
    type,
    body,
    get gzip() {
      return (gzip ??= gzipSync(body, { level: 9 }));
    },
    get br() {
      return (br ??= brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    },
  };
}

/** Reads dist/ (index.html and assets/); undefined when no build is there yet. */
export function loadBundle(dist: string): Bundle | undefined {
  const indexFile = path.join(dist, 'index.html');
  if (!existsSync(indexFile)) return undefined;
  const dir = path.join(dist, 'assets');
  const assets = new Map<string, Asset>();
  const compressed = path.join(dist, 'compressed');
  if (existsSync(dir)) for (const name of readdirSync(dir)) assets.set(name, asset(path.join(dir, name), compressed));
  // A build from before views came from the modules has no views.json: it holds none of theirs.
  const manifestFile = path.join(dist, 'views.json');
  const manifest = existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as BuildManifest) : { views: [], stamps: {} };
  return { index: asset(indexFile), assets, builtAt: statSync(indexFile).mtime, manifest };
}

/** The best encoding the client accepts among those the asset has. */
export function pickEncoding(a: Asset, acceptEncoding: string | undefined): { body: Buffer; encoding?: 'br' | 'gzip' } {
  const accepted = (acceptEncoding ?? '').toLowerCase();
  if (a.br && /\bbr\b/.test(accepted)) return { body: a.br, encoding: 'br' };
  if (a.gzip && /\bgzip\b/.test(accepted)) return { body: a.gzip, encoding: 'gzip' };
  return { body: a.body };
}
