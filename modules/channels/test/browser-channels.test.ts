/**
 * The Channels view in a real browser (Debian's Chromium through playwright-core, as the dashboard's browser tests):
 * the Telegram channel configured from the form against the Telegram fake and seen connected, its token never shown
 * back, a test sent, a pairing code of an unknown sender approved (the sender's name shown as text, not HTML) and the
 * sender then answered, a failed reply chunk pruned after a confirm, and the QR sign-in of the fixture adapter drawn
 * as an image and followed to signed in. Without /usr/bin/chromium it is skipped outside CI (apt-get install -y chromium).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAgentTestKernel, startTelegramFake, waitFor, type AgentTestKernel, type TelegramFake } from '@talon/testing';
import { fixtures } from './helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browserTest = {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` : false,
  timeout: 90_000,
};
const MODULES = ['dashboard', 'auth', 'security-headers', 'error-envelope', 'system', 'agents', 'secrets', 'net', 'tasks', 'commands', 'bindings'];
const HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">Mallory';

let k: AgentTestKernel | undefined;
let tg: TelegramFake | undefined;
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];

before(async () => {
  if (browserTest.skip) return;
  tg = await startTelegramFake();
  k = await startAgentTestKernel({
    only: [...MODULES, 'channels', 'channel-telegram', 'channel-qr'],
    config: `module_paths = ["${fixtures}"]\n`,
  });
  await k.spawnAgent('helper');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(15_000);
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
});
after(async () => {
  await browser?.close();
  await k?.stop();
  await tg?.stop();
});

const bodyOf = (m: Record<string, unknown>) => String(m.text ?? '');

test('Telegram configured from the view: connected, token not shown back, a test sent', browserTest, async () => {
  await page.goto(`${k!.url}/#/channels`);
  const row = page.getByRole('row', { name: /telegram/ });
  await row.getByText('not configured').waitFor();
  await row.getByRole('link', { name: 'telegram' }).click();
  const form = page.getByRole('form', { name: 'Configure telegram' });
  await form.getByLabel('Token (not set)').fill(tg!.token);
  await form.getByLabel('api_url').fill(tg!.apiRoot);
  await form.getByLabel('Direct messages').selectOption('pairing');
  await form.getByLabel('Default conversation').fill('4242');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('status').filter({ hasText: 'Saved telegram' }).waitFor();
  await page.getByLabel('Connection').getByText('connected').waitFor();
  // The secret is never filled in again: the label says it is set, the box stays empty.
  const token = form.getByLabel('Token (set)');
  assert.equal(await token.inputValue(), '');
  assert.equal(await token.getAttribute('type'), 'password');
  assert.ok(!(await page.content()).includes(tg!.token), 'the token appears nowhere in the page');

  const send = page.getByRole('form', { name: 'Send a test message' });
  await send.getByRole('button', { name: 'Send test' }).click();
  await send.getByRole('status').filter({ hasText: 'Test message sent to 4242' }).waitFor();
  assert.ok(tg!.sent.some((m) => (m.chat as { id: number }).id === 4242 && bodyOf(m).startsWith('Talon channel test')));
});

test('an unknown sender asks to pair: the code is approved in the view and the sender is answered', browserTest, async () => {
  tg!.injectMessage({ chat: { id: 777, type: 'private' }, from: { id: 777, is_bot: false, first_name: HOSTILE_NAME }, text: 'let me in' });
  const pairing = page.locator('[aria-labelledby="pairing-title"]');
  const row = pairing.getByRole('row', { name: /Mallory/ });
  await row.waitFor({ timeout: 20_000 });
  // The platform's display name is text: its markup is shown, never made into an element.
  assert.match((await row.textContent()) ?? '', /<img src=x onerror=/);
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  const code = ((await row.locator('code').textContent()) ?? '').trim();
  assert.ok(
    tg!.sent.some((m) => bodyOf(m).includes(code)),
    'the sender was told the code',
  );
  await row.getByRole('button', { name: `Approve ${code}` }).click();
  await pairing
    .getByRole('status')
    .filter({ hasText: /^Approved / })
    .waitFor();
  await pairing.getByRole('row', { name: /Mallory/ }).waitFor({ state: 'detached' });

  k!.fake.enqueue({ text: 'welcome aboard' });
  tg!.injectMessage({ chat: { id: 777, type: 'private' }, from: { id: 777, is_bot: false, first_name: HOSTILE_NAME }, text: 'and now?' });
  await waitFor(() => tg!.sent.some((m) => (m.chat as { id: number }).id === 777 && bodyOf(m) === 'welcome aboard'), 15_000, 'the approved sender answered');
});

test('a failed reply chunk is listed and pruned after a confirm in the page', browserTest, async () => {
  const payload = JSON.stringify({ chatId: '4242', text: 'a <b>lost</b> reply', plain: 'a lost reply', nonce: 'n-b1' });
  await k!.kernel.store.run(
    "INSERT INTO channels_outbound (id, channel, chat_id, reply_id, seq, payload, state, error, created_at, not_after, updated_at) VALUES ('b-1', 'telegram', '4242', 'r-b1', 0, ?, 'failed', 'Bad Request: chat not found', 1, 1, 1)",
    [payload],
  );
  await page.goto(`${k!.url}/#/channels`);
  const journal = page.locator('[aria-labelledby="journal-title"]');
  const row = journal.getByRole('row', { name: /b-1/ });
  await row.getByText('a <b>lost</b> reply').waitFor();
  await row.getByRole('button', { name: 'Prune b-1' }).click();
  await row.getByRole('button', { name: 'Delete b-1 now' }).click();
  await journal.getByRole('status').filter({ hasText: 'Pruned b-1' }).waitFor();
  assert.equal(await k!.kernel.store.one("SELECT id FROM channels_outbound WHERE id = 'b-1'"), undefined);
});

test('QR sign-in: the code drawn as an image, scanned, then signed in and connected', browserTest, async () => {
  await page.goto(`${k!.url}/#/channels/qrchat`);
  await page.getByRole('form', { name: 'Configure qrchat' }).getByRole('button', { name: 'Save' }).click();
  const qr = page.locator('[aria-labelledby="qr-title"]');
  await qr.getByRole('button', { name: 'Show the QR code' }).click();
  const image = qr.getByRole('img', { name: 'QR code to sign qrchat in' });
  await image.waitFor();
  assert.match((await image.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
  assert.ok(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100), 'the image is drawn');
  await qr.getByRole('status').filter({ hasText: 'Waiting for the code to be scanned' }).waitFor();
  await k!.request('/api/test-qr/signal', { method: 'POST', json: { status: 'scanned' } });
  await qr.getByRole('status').filter({ hasText: 'Scanned' }).waitFor();
  await k!.request('/api/test-qr/signal', { method: 'POST', json: { status: 'authenticated' } });
  await qr.getByRole('status').filter({ hasText: 'Signed in' }).waitFor();
  await page.getByLabel('Connection').getByText('connected').waitFor();
  assert.deepEqual(problems, []);
});
