/**
 * A third-party module's dashboard view: loaded from module_paths, the module's view is not in the dashboard's
 * install build, so the dashboard builds again with it (into its data folder) and lists it; the view opens from the
 * navigation and talks to the module's API. Without Chromium the browser part is skipped outside CI.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';

const examples = path.resolve('examples');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let k: TestKernel;

before(async () => {
  k = await startTestKernel({ only: ['dashboard', 'system', 'hello'], config: `module_paths = ["${examples}"]\n` });
});
after(() => k.stop());

const listed = async () => ((await (await k.request('/api/dashboard/views')).json()) as { views: { module: string; id: string }[] }).views;

test('the view of a module loaded from module_paths is built and listed', { timeout: 120_000 }, async () => {
  await waitFor(async () => (await listed()).some((v) => v.module === 'hello' && v.id === 'hello'), 110_000, 'the hello view to be built');
  assert.deepEqual(
    (await listed()).find((v) => v.id === 'hello'),
    { module: 'hello', id: 'hello', title: 'Hello', group: 'Examples', order: 900 },
  );
  assert.ok(existsSync(path.join(k.home, 'data', 'dashboard', 'dist', 'views.json')), 'built into the dashboard data folder');
});

test(
  'the view opens from the navigation and greets through the module API',
  { skip: !existsSync(CHROMIUM) && !process.env.CI ? `no Chromium at ${CHROMIUM}` : false, timeout: 60_000 },
  async () => {
    await waitFor(async () => (await listed()).some((v) => v.id === 'hello'), 110_000, 'the hello view to be built');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(err.message));
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      await page.goto(`${k.url}/`);
      await page.getByRole('navigation').getByRole('link', { name: 'Hello' }).click();
      await page.getByLabel('Name').fill('ann');
      await page.getByRole('button', { name: 'Greet' }).click();
      await page.getByRole('status').getByText('Hello, ann! (greeted 1 time)').waitFor({ timeout: 10_000 });
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  },
);
