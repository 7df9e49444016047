/** The phone: at 390×844 the chat is the screen, the sessions behind a button, tables as cards; the installable app. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, screenshot, spawn, startEnv, type Env } from './helpers.ts';

const PHONE = { width: 390, height: 844 };
let env: Env | undefined;
let agentId = '';
before(async () => {
  if (browserTest.skip) return;
  env = await startEnv();
  agentId = await spawn(env.k, 'name = "pocket"\n');
});
after(() => env?.stop());

async function phonePage(path: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await env!.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.setDefaultTimeout(10_000);
  await page.goto(env!.k.url + path);
  return { context, page, problems };
}

/** The element is wholly inside the viewport, and the page itself does not scroll. */
async function onScreen(page: Page, selector: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  assert.ok(box, `${selector} is shown`);
  assert.ok(box.y >= 0 && box.y + box.height <= PHONE.height, `${selector} within the screen: ${JSON.stringify(box)}`);
  const scroll = await page.evaluate(() => ({ page: document.documentElement.scrollHeight, screen: innerHeight }));
  assert.ok(scroll.page <= scroll.screen, `the page does not scroll: ${JSON.stringify(scroll)}`);
}

test('at 390×844 the composer is on screen without scrolling, after a long conversation too; the sessions open from a button', browserTest, async () => {
  const { context, page, problems } = await phonePage(`/#/chat/${agentId}`);
  try {
    await page.locator('.chat-body[data-loaded="true"]').waitFor();
    await onScreen(page, '#message');
    // The session list is folded: its button shows, its contents do not.
    assert.equal(await page.getByRole('button', { name: 'New session' }).isVisible(), false);
    for (let i = 0; i < 4; i++) {
      env!.fake.enqueue({ text: `Answer ${i}.\n\n${'A long line of the reply that wraps on a phone. '.repeat(8)}` });
      await page.getByLabel('Message', { exact: true }).fill(`Question ${i}`);
      await page.getByLabel('Message', { exact: true }).press('Enter');
      await page.locator('.message', { hasText: `Answer ${i}.` }).waitFor();
      await waitFor(async () => await page.getByRole('button', { name: 'Send' }).isEnabled(), 8000, 'the turn to end');
    }
    await onScreen(page, '#message');
    await onScreen(page, '.composer button[type="submit"]');
    // The latest reply is in view above the composer (the messages scroll, not the page).
    await onScreen(page, '.message:last-child');
    await screenshot(page, 'phone-chat');
    assert.deepEqual(await axeViolations(page), []);

    const toggle = page.getByRole('button', { name: 'Sessions', exact: true });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    await page.getByRole('button', { name: 'New session' }).waitFor({ state: 'visible' });
    await page.locator('.session-list li').first().waitFor();
    assert.deepEqual(await axeViolations(page), []);
    await page.getByRole('button', { name: 'New session' }).click();
    // Choosing closes the panel and the chat is the screen again.
    await page.getByRole('button', { name: 'New session' }).waitFor({ state: 'hidden' });
    await onScreen(page, '#message');
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('at 390 px a table becomes cards, each cell under its column heading', browserTest, async () => {
  const { context, page } = await phonePage('/#/agents');
  try {
    const cell = page.locator('table.table tbody tr', { hasText: 'pocket' }).locator('td:not([data-label=""])').first();
    await cell.waitFor();
    const label = await cell.getAttribute('data-label');
    assert.ok(label, 'the cell is labelled by its column');
    const shown = await cell.evaluate((td) => ({
      before: getComputedStyle(td, '::before').content,
      row: getComputedStyle(td.parentElement!).display,
      head: getComputedStyle(td.closest('table')!.tHead!).position,
    }));
    assert.deepEqual(shown, { before: JSON.stringify(label), row: 'block', head: 'absolute' });
    assert.deepEqual(await axeViolations(page), []);
  } finally {
    await context.close();
  }
});

test(
  'installable: the manifest is linked, the service worker registers after load, and the offline page shows when the network is gone',
  browserTest,
  async () => {
    const { context, page, problems } = await phonePage(`/#/chat/${agentId}`);
    try {
      await page.locator('.chat-body[data-loaded="true"]').waitFor();
      const manifest = await page.evaluate(() => document.querySelector<HTMLLinkElement>('link[rel="manifest"]')?.href);
      assert.equal(manifest, `${env!.k.url}/manifest.webmanifest`);
      const scope = await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.scope));
      assert.equal(scope, `${env!.k.url}/`);
      // Registered after the chat was interactive, never before it.
      const order = await page.evaluate(() => {
        const mark = performance.getEntriesByName('talon:chat-interactive')[0]?.startTime;
        const worker = performance.getEntriesByType('resource').find((e) => e.name.endsWith('/sw.js'))?.startTime;
        return { mark, worker };
      });
      if (order.worker !== undefined) assert.ok(order.mark !== undefined && order.worker > order.mark, JSON.stringify(order));
      // Controlled from the next load on; the API is never cached by the worker.
      await page.reload();
      await page.locator('.chat-body[data-loaded="true"]').waitFor();
      assert.equal(await page.evaluate(() => navigator.serviceWorker.controller !== null), true);
      const cached = await page.evaluate(async () => {
        const urls: string[] = [];
        for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
        return urls.sort();
      });
      assert.deepEqual(cached, ['/icon.svg', '/offline.html']);

      await context.setOffline(true);
      await page.goto(`${env!.k.url}/#/chat/${agentId}`).catch(() => undefined);
      await page.reload().catch(() => undefined);
      await page.getByRole('heading', { name: 'Talon is out of reach' }).waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await context.setOffline(false);
      // Online again: the page comes from the network, never a stale copy.
      await page.getByRole('link', { name: 'Try again' }).click();
      await page.locator('.chat-body[data-loaded="true"]').waitFor();
      assert.deepEqual(
        problems.filter((p) => !/ERR_INTERNET_DISCONNECTED/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  },
);
