/**
 * Browser tests: a kernel with the dashboard and the modules its views use, a FakeProvider behind the default model,
 * and Debian's Chromium driven by playwright-core. Chromium runs headless with the flags this machine needs (no
 * sandbox as root, no background networking: the network is closed). Without /usr/bin/chromium the browser tests
 * are skipped outside CI (apt-get install -y chromium); in CI they fail.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Options for node:test: skip (with the reason) when there is no Chromium and this is not CI. */
export const browserTest = {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` : false,
  timeout: 60_000,
};

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, timeout: 30_000 });
}

export const MODULES = [
  'dashboard',
  'auth',
  'security-headers',
  'request-id',
  'error-envelope',
  'system',
  'agents',
  'tools',
  'llm-openai',
  'catalog',
  'memory',
  'usage',
  'logs',
  'config-api',
  'security',
];

export interface Env {
  k: AgentTestKernel;
  fake: FakeProvider;
  browser: Browser;
  stop(): Promise<void>;
}

/** More config.toml; as a function it is given the FakeProvider's URL. */
export async function startEnv(config: string | ((fakeUrl: string) => string) = '', extraModules: string[] = []): Promise<Env> {
  const k = await startAgentTestKernel({ only: [...MODULES, ...extraModules], config });
  const browser = await launch();
  return {
    k,
    fake: k.fake,
    browser,
    async stop() {
      await browser.close();
      await k.stop();
    },
  };
}

export interface Watched {
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  problems: string[];
  /** The URL of every GET the page made, from its first. */
  reads: URL[];
}

/** `context` adds to the browser context's options (a time zone, say). */
export async function openPage(env: Env, path = '/', context: BrowserContextOptions = {}): Promise<Watched> {
  const page = await (await env.browser.newContext({ viewport: { width: 1280, height: 860 }, ...context })).newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  const reads: URL[] = [];
  page.on('request', (r) => r.method() === 'GET' && reads.push(new URL(r.url())));
  page.setDefaultTimeout(10_000);
  await page.goto(env.k.url + path);
  return { page, problems, reads };
}

/**
 * A browser dialog (alert, confirm, prompt) counts as a problem: the views ask in the page. Dismissed, so a
 * `confirm()` answers no and what it guards does not happen.
 */
export function refuseDialogs({ page, problems }: Watched): void {
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
}

/** The page's reads of the whole agent list (GET /api/agents with no limit): a view that scales reads a page at a time. */
export const wholeAgentListReads = (reads: URL[]) =>
  reads.filter((u) => u.pathname === '/api/agents' && !u.searchParams.has('limit')).map((u) => u.pathname + u.search);

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now, in the light and in the dark theme
 * ("theme: rule id: where"): the same page is checked twice, with the theme switched between, then put back.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  // Injected through the DevTools protocol, not a <script>: the page's CSP would (rightly) refuse an inline one.
  if (!(await page.evaluate('typeof axe === "object"'))) await page.evaluate(AXE);
  const was = await page.evaluate(() => document.documentElement.dataset.theme);
  const found: string[] = [];
  for (const theme of ['light', 'dark']) {
    await page.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
    const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
      violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
    };
    for (const v of result.violations)
      if (v.impact === 'serious' || v.impact === 'critical') found.push(`${theme}: ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }
  await page.evaluate((t) => (document.documentElement.dataset.theme = t), was ?? 'light');
  return found;
}

/** Creates an agent through the API (for tests whose subject is not spawning). */
export async function spawn(k: TestKernel, manifest: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest }, headers });
  if (res.status !== 201) throw new Error(`spawn: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { agent_id: string }).agent_id;
}

/** Screenshots of the main views for the docs, when DASHBOARD_SCREENSHOTS names a folder (docs/img). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png` });
}
