/**
 * The dashboard in Debian's Chromium against a service on loopback: the JavaScript a first visit downloads
 * (compressed, as sent; target ≤ 200 KB) and the time until the chat view is interactive — the conversation is on
 * screen and the message box takes input (target ≤ 500 ms), cold (a new browser profile each time) and warm.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { FakeProvider, startTestKernel } from '@talon/module-sdk/testing';
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
const RUNS = 20;

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
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  try {
    const spawned = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "bench"\n' } });
    const { agent_id: id } = (await spawned.json()) as { agent_id: string };
    fake.enqueue({ text: 'Hello! '.repeat(50) });
    await k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'hi' } });

    const cold: number[] = [];
    const warm: number[] = [];
    let firstLoadJs = 0;
    let firstLoadFiles = 0;
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      for (const times of [cold, warm]) {
        await page.goto(`${k.url}/#/chat/${id}`);
        await page.waitForSelector('.chat-body[data-loaded] textarea#message:not([disabled])');
        // ms from the start of this navigation to the app's mark (set in the page: no driver round trip in it).
        times.push((await page.evaluate(() => performance.getEntriesByName('talon:chat-interactive')[0]?.startTime ?? NaN)) as number);
        if (times === cold && i === 0) {
          const js = (await page.evaluate(() =>
            performance
              .getEntriesByType('resource')
              .filter((e) => e.name.endsWith('.js'))
              .map((e) => (e as PerformanceResourceTiming).encodedBodySize),
          )) as number[];
          firstLoadJs = js.reduce((a, b) => a + b, 0);
          firstLoadFiles = js.length;
        }
        await page.goto('about:blank');
      }
      await context.close();
    }
    return {
      'machine load average (1 min) at the end; timings stretch with it': loadavg()[0].toFixed(1),
      'first load: JavaScript files': firstLoadFiles,
      'first load: compressed JavaScript KB (target ≤ 200)': (firstLoadJs / 1024).toFixed(1),
      'whole build: JavaScript KB gzip / brotli (views load on demand)': `${(allGzip / 1024).toFixed(1)} / ${(allBr / 1024).toFixed(1)}`,
      [`chat interactive, cold, p50 / max ms over ${RUNS} (target ≤ 500)`]: `${percentile(cold, 50).toFixed(0)} / ${Math.max(...cold).toFixed(0)}`,
      [`chat interactive, warm cache, p50 / max ms over ${RUNS}`]: `${percentile(warm, 50).toFixed(0)} / ${Math.max(...warm).toFixed(0)}`,
    };
  } finally {
    await browser.close();
    await k.stop();
    await fake.stop();
  }
}
