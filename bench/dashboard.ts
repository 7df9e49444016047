/**
 * The dashboard in Debian's Chromium against a service on loopback: the JavaScript a first visit downloads
 * (compressed, as sent; target ≤ 200 KB) and the time until the chat view is interactive — the conversation is on
 * screen and the message box takes input (target ≤ 500 ms), cold (a new browser profile each time) and warm.
 *
 * The machine is shared, so the figures come with what the same browser needs for a page that does nothing: a
 * blank page with one external module script that sets the same mark, served from 127.0.0.1 and opened the same
 * way (the baseline). The dashboard's own cost is the difference. Where the cold time goes is read from the page's
 * resource timings: the HTML, the entry script, and the API calls before the chat is usable (the chat's first reads,
 * and GET /api/modules when the page must probe for sign-in).
 *
 * Nothing of the driver runs in the page while it loads but one PerformanceObserver promise, evaluated after the
 * navigation has committed (no selector engine is injected).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { FakeProvider, startTestKernel } from '@talon/testing';
import { percentile } from './util.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const RUNS = Number(process.env.DASHBOARD_BENCH_RUNS ?? 20);
const MARK = 'talon:chat-interactive';

// Page-side code as text: the TypeScript loader's helpers (name keeping) do not exist in the page.
const MARK_TIME = `new Promise((resolve) => {
  const seen = () => performance.getEntriesByName(${JSON.stringify(MARK)})[0]?.startTime;
  if (seen() !== undefined) return resolve(seen());
  new PerformanceObserver((list, observer) => {
    if (seen() === undefined) return;
    observer.disconnect();
    resolve(seen());
  }).observe({ type: 'mark', buffered: true });
})`;

/** Where a cold load's time went: ends of the HTML and the entry script, the first API call sent, all answered (ms). */
interface Phases {
  html: number;
  entry: number;
  apiSent: number;
  apiAnswered: number;
  /** Compressed sizes of the scripts fetched before the mark. */
  js: number[];
}

const PHASES = `(() => {
  const mark = performance.getEntriesByName(${JSON.stringify(MARK)})[0].startTime;
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  const path = (e) => new URL(e.name).pathname;
  const api = res.filter((e) => path(e).startsWith('/api/') && e.startTime < mark);
  const entry = res.find((e) => /^\\/assets\\/index-.*\\.js$/.test(path(e)));
  return {
    html: nav.responseEnd,
    entry: entry ? entry.responseEnd : NaN,
    apiSent: Math.min(...api.map((e) => e.startTime)),
    apiAnswered: Math.max(...api.map((e) => e.responseEnd)),
    js: res.filter((e) => path(e).endsWith('.js') && e.startTime < mark).map((e) => e.encodedBodySize),
  };
})()`;

/**
 * Every script a first chat visit fetches, once the page has finished what it defers (the Markdown renderer when
 * idle, the highlighter for the reply's code block): compressed sizes, waited for at most 10 s.
 */
const WHOLE_VISIT = `new Promise((resolve) => {
  const started = performance.now();
  const check = () => {
    const done = document.querySelector('.markdown:not(.plain) code.hljs span');
    if (!done && performance.now() - started < 10000) return setTimeout(check, 50);
    resolve(performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.js')).map((e) => e.encodedBodySize));
  };
  check();
})`;

/** A page that does nothing but run one external module script that sets the mark. */
async function baselineServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/b.js') {
      res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
      return res.end(`performance.mark(${JSON.stringify(MARK)});`);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blank</title><script type="module" src="/b.js"></script></head><body></body></html>',
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Cold: a new profile, the first visit. Warm: the same profile again (its cache filled). */
async function visit(browser: Browser, url: string, warm: boolean, whole = false) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    const cold = (await page.evaluate(MARK_TIME)) as number;
    const detail = (await page.evaluate(PHASES)) as Phases;
    const allJs = whole ? ((await page.evaluate(WHOLE_VISIT)) as number[]) : [];
    let again: number | undefined;
    if (warm) {
      await page.goto('about:blank');
      await page.goto(url, { waitUntil: 'commit' });
      again = (await page.evaluate(MARK_TIME)) as number;
    }
    return { cold, warm: again, detail, allJs };
  } finally {
    await context.close();
  }
}

const p50 = (xs: number[]) => percentile(xs, 50).toFixed(0);
const spread = (xs: number[]) => `${p50(xs)} / ${Math.max(...xs).toFixed(0)}`;

export async function dashboardBench() {
  const dist = path.resolve(import.meta.dirname, '../modules/dashboard/dist/assets');
  if (!existsSync(dist)) throw new Error('no build: run node scripts/build-dashboard.mjs');
  const all = readdirSync(dist).filter((f) => f.endsWith('.js'));
  const allGzip = all.reduce((n, f) => n + gzipSync(readFileSync(path.join(dist, f)), { level: 9 }).length, 0);
  const allBr = all.reduce((n, f) => n + brotliCompressSync(readFileSync(path.join(dist, f))).length, 0);

  process.env.DASHBOARD_BENCH_KEY = 'sk-bench';
  const fake = new FakeProvider();
  await fake.start();
  const k = await startTestKernel({
    only: ['dashboard', 'system', 'agents', 'llm-openai', 'usage', 'catalog', 'security-headers', 'error-envelope'],
    config: `[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "DASHBOARD_BENCH_KEY"\n`,
  });
  const blank = await baselineServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const loadBefore = loadavg()[0];
  try {
    const spawned = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "bench"\n' } });
    const { agent_id: id } = (await spawned.json()) as { agent_id: string };
    // A conversation with a reply in Markdown and a code block, as a chat usually has.
    fake.enqueue({ text: 'Hello! Here is **the plan**:\n\n1. read\n2. write\n\n```ts\nconst x: number = 1;\n```\n' + 'More words. '.repeat(40) });
    await k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'hi' } });
    const app = `${k.url}/#/chat/${id}`;
    // One of each first, unmeasured: the browser's own first start is not the page's.
    await visit(browser, blank.url, false);
    await visit(browser, app, false);

    const cold: number[] = [];
    const warm: number[] = [];
    const baseline: number[] = [];
    const detail: Phases[] = [];
    let beforeInteractive: number[] = [];
    let wholeVisit: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Interleaved, so both see the same moments of a shared machine.
      baseline.push((await visit(browser, blank.url, false)).cold);
      const run = await visit(browser, app, true, i === 0);
      cold.push(run.cold);
      warm.push(run.warm!);
      detail.push(run.detail);
      if (i === 0) [beforeInteractive, wholeVisit] = [run.detail.js, run.allJs];
    }
    const kb = (sizes: number[]) => `${(sizes.reduce((a, b) => a + b, 0) / 1024).toFixed(1)} KB in ${sizes.length} files`;
    const phase = (f: (p: Phases) => number) => p50(detail.map(f).filter(Number.isFinite));
    const overhead = cold.map((c, i) => c - baseline[i]);
    return {
      'machine: cores / load average (1 min) before and after': `${cpus().length} / ${loadBefore.toFixed(1)} → ${loadavg()[0].toFixed(1)} (timings stretch with it)`,
      'first visit: compressed JavaScript, all of it (target ≤ 200 KB) / before the chat is interactive': `${kb(wholeVisit)} / ${kb(beforeInteractive)}`,
      'whole build: JavaScript KB gzip / brotli (views load on demand)': `${(allGzip / 1024).toFixed(1)} / ${(allBr / 1024).toFixed(1)}`,
      [`baseline, a blank page with one module script, cold, p50 / max ms over ${RUNS}`]: spread(baseline),
      [`chat interactive, cold, p50 / max ms over ${RUNS} (target ≤ 500)`]: spread(cold),
      'chat interactive, cold, minus the same run’s baseline, p50 ms': p50(overhead),
      [`chat interactive, warm cache, p50 / max ms over ${RUNS}`]: spread(warm),
      'cold path, p50 ms from the navigation: HTML / entry script / first API call sent / API calls answered / interactive': [
        phase((p) => p.html),
        phase((p) => p.entry),
        phase((p) => p.apiSent),
        phase((p) => p.apiAnswered),
        p50(cold),
      ].join(' / '),
    };
  } finally {
    await browser.close();
    await blank.close();
    await k.stop();
    await fake.stop();
  }
}
