/** GET / and the assets, without a browser: headers, caching, compression, refusals, and the first-start build. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const KEY = 'serve-test-key-0123456789';
let k: TestKernel;
before(async () => {
  k = await startTestKernel({ only: ['dashboard', 'auth', 'security-headers', 'error-envelope', 'system'], config: `api_key = "${KEY}"\n` });
});
after(() => k?.stop());

/** The asset URLs index.html names. */
const assetUrls = (html: string) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);

test('GET /: the app, public, under the security headers, scripts only from hashed files, the auth mode in a meta tag', async () => {
  const res = await k.request('/');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-eval|script-src[^;]*unsafe-inline/);
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('cache-control'), 'no-store, no-cache, must-revalidate', 'the page itself is never cached');
  const html = await res.text();
  assert.match(html, /<meta name="talon-auth" content="api_key">/);
  assert.doesNotMatch(html, /talon-modules/, 'before sign-in the page names no module');
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.ok(scripts.length >= 1);
  for (const s of scripts) assert.match(s, /src="\/assets\/[\w-]+-[\w-]{8}\.js"/, `no inline script: ${s}`);
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handler');
});

test('assets: long-cache, compressed when asked, the same bytes either way; public', async () => {
  const urls = assetUrls(await (await k.request('/')).text());
  assert.ok(urls.some((u) => u.endsWith('.js')) && urls.some((u) => u.endsWith('.css')), urls.join());
  assert.ok(
    urls.some((u) => /\/chat-/.test(u)),
    'the chat view is preloaded',
  );
  for (const url of urls) {
    const plain = await k.request(url, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.status, 200, url);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(plain.headers.get('vary'), 'accept-encoding');
    assert.match(plain.headers.get('content-type') ?? '', url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    assert.equal(plain.headers.get('content-encoding'), null);
    const body = Buffer.from(await plain.arrayBuffer());
    if (body.length < 512) {
      // Too small to gain from compression: sent as it is whatever the client accepts.
      assert.equal((await rawGet(url, 'br')).headers['content-encoding'], undefined, url);
      continue;
    }
    // fetch() would decode by itself; node:http shows the bytes as sent.
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const raw = await rawGet(url, encoding);
      assert.equal(raw.headers['content-encoding'], encoding, `${url} ${encoding}`);
      assert.ok(decode(raw.body).equals(body), `${url}: ${encoding} decodes to the file`);
      assert.ok(raw.body.length < body.length);
    }
  }
});

test('the installable app: the page links the manifest and icons; manifest, icons, worker and offline page are public with their types', async () => {
  const html = await (await k.request('/')).text();
  assert.match(html, /<link rel="manifest" href="\/manifest.webmanifest"/);
  assert.match(html, /<link rel="icon" href="\/icon.svg" type="image\/svg\+xml"/);
  const expected: Record<string, [RegExp, string]> = {
    '/manifest.webmanifest': [/^application\/manifest\+json$/, 'no-cache'],
    '/sw.js': [/^text\/javascript/, 'no-cache'],
    '/offline.html': [/^text\/html/, 'no-cache'],
    '/icon.svg': [/^image\/svg\+xml$/, 'public, max-age=86400'],
    '/icon-192.png': [/^image\/png$/, 'public, max-age=86400'],
    '/icon-512.png': [/^image\/png$/, 'public, max-age=86400'],
  };
  for (const [url, [type, cache]] of Object.entries(expected)) {
    // No key: the browser fetches these before (and without) signing in.
    const res = await k.request(url);
    assert.equal(res.status, 200, url);
    assert.match(res.headers.get('content-type') ?? '', type, url);
    assert.equal(res.headers.get('cache-control'), cache, url);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/, url);
    const body = Buffer.from(await res.arrayBuffer());
    if (url.endsWith('.png')) assert.equal(body.subarray(1, 4).toString(), 'PNG', url);
  }
  const manifest = (await (await k.request('/manifest.webmanifest')).json()) as { start_url: string; display: string; icons: { src: string; sizes: string }[] };
  assert.equal(manifest.display, 'standalone');
  assert.deepEqual(
    manifest.icons.map((i) => i.sizes),
    ['any', '192x192', '512x512'],
  );
  for (const icon of manifest.icons) assert.equal((await k.request(icon.src)).status, 200, icon.src);
  // The worker names the version of what it caches, and answers navigations only, network first.
  const worker = await (await k.request('/sw.js')).text();
  assert.match(worker, /const CACHE = 'talon-shell-[0-9a-f]{12}';/);
  assert.match(worker, /request\.mode !== 'navigate'/);
  assert.doesNotMatch(worker, /\/api\//, 'the worker never names the API');
});

test('assets: an unknown name is a 404, a name with a path in it a 400, never a file outside the build', async () => {
  const missing = await k.request('/assets/nothing-here.js');
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { error: "no dashboard asset named 'nothing-here.js'" });
  const escape = await k.request('/assets/..%2F..%2Fpackage.json');
  assert.equal(escape.status, 400);
  assert.match(((await escape.json()) as { error: string }).error, /file/);
});

test('without a key the page says the API is open and names the running modules (no probe needed)', async () => {
  const open = await startTestKernel({ only: ['dashboard', 'auth'] });
  try {
    const html = await (await open.request('/')).text();
    assert.match(html, /<meta name="talon-auth" content="open">/);
    assert.match(html, /<meta name="talon-modules" content="(auth dashboard|dashboard auth)">/);
  } finally {
    await open.stop();
  }
});

test('GET / is in the API description, public', async () => {
  const doc = (await (await k.request('/api/openapi.json', { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
    paths: Record<string, { get: { security?: unknown[] } }>;
  };
  assert.deepEqual(doc.paths['/'].get.security, []);
  assert.equal(doc.paths['/assets/{file}'], undefined, 'the asset route is hidden');
});

/** A copy of this module in a folder of its own, with a stand-in build script, to see the first start without dist/. */
function moduleCopy(buildScript: string): string {
  const root = mkdtempSync(path.join(tmpdir(), 'dashboard-first-start-'));
  const dir = path.join(root, 'modules', 'dashboard-copy');
  const here = path.resolve(import.meta.dirname, '..');
  for (const part of ['index.ts', 'routes', 'services', 'app/pwa']) cpSync(path.join(here, part), path.join(dir, part), { recursive: true });
  writeFileSync(path.join(dir, 'module.toml'), readFileSync(path.join(here, 'module.toml'), 'utf8').replace(/^name = .*$/m, 'name = "dashboard-copy"'));
  mkdirSync(path.join(root, 'scripts'));
  writeFileSync(path.join(root, 'scripts', 'build-dashboard.mjs'), buildScript);
  return root;
}

test('first start without a build: GET / says it is building, then serves the app the build made', async () => {
  const root = moduleCopy(`
    import { mkdirSync, writeFileSync } from 'node:fs';
    await new Promise((r) => setTimeout(r, 300));
    const dist = new URL('../modules/dashboard-copy/dist/', import.meta.url);
    mkdirSync(new URL('assets/', dist), { recursive: true });
    writeFileSync(new URL('assets/app-abcdefgh.js', dist), 'console.log(1)');
    writeFileSync(new URL('index.html', dist), '<!doctype html><html><head></head><body><script type="module" src="/assets/app-abcdefgh.js"></script></body></html>');
  `);
  const copy = await startTestKernel({ only: ['dashboard-copy'], config: `module_paths = [${JSON.stringify(path.join(root, 'modules'))}]\n` });
  try {
    const first = await copy.request('/');
    assert.equal(first.status, 503);
    assert.equal(first.headers.get('retry-after'), '3');
    assert.match(await first.text(), /being built/);
    const html = await waitFor(
      async () => {
        const r = await copy.request('/');
        return r.status === 200 ? r.text() : '';
      },
      10_000,
      'the build',
    );
    assert.match(html, /app-abcdefgh\.js/);
    assert.equal((await copy.request('/assets/app-abcdefgh.js')).status, 200);
  } finally {
    await copy.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('first start whose build fails: GET / says so with what the build printed, escaped; the API goes on', async () => {
  const root = moduleCopy(`console.error('vite: <cannot> build'); process.exit(1);`);
  const copy = await startTestKernel({ only: ['dashboard-copy', 'system'], config: `module_paths = [${JSON.stringify(path.join(root, 'modules'))}]\n` });
  try {
    const res = await waitFor(async () => {
      const r = await copy.request('/');
      const text = await r.text();
      return /could not be built/.test(text) ? { r, text } : false;
    }, 10_000);
    if (!res) return assert.fail('no failure page');
    assert.equal(res.r.status, 503);
    assert.match(res.text, /vite: &#60;cannot&#62; build/);
    assert.equal((await copy.request('/api/health')).status, 200);
  } finally {
    await copy.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

async function rawGet(pathname: string, encoding: string): Promise<{ headers: import('node:http').IncomingHttpHeaders; body: Buffer }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    http
      .get(`${k.url}${pathname}`, { headers: { 'accept-encoding': encoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

test('npm run dev: the app comes from Vite on the service port, under its headers; files outside the app are refused', async () => {
  const dev = await startTestKernel({ only: ['dashboard', 'security-headers', 'auth'], dev: true });
  try {
    const page = await dev.request('/');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    const html = await page.text();
    assert.match(html, /<script type="module" src="\/@vite\/client"><\/script>/);
    assert.match(html, /<meta name="talon-auth" content="open">/);
    const main = await dev.request('/src/main.tsx');
    assert.equal(main.status, 200);
    assert.match(main.headers.get('content-type') ?? '', /javascript/);
    assert.match(main.headers.get('x-frame-options') ?? '', /DENY/);
    assert.match(await main.text(), /from "\/src\/app\.tsx"/);
    const outside = await dev.request(`/@fs${path.resolve(import.meta.dirname, '..', '..', '..', 'package.json')}`);
    assert.equal(outside.status, 403);
    assert.equal((await dev.request('/src/nothing.tsx')).status, 404);
  } finally {
    await dev.stop();
  }
});
