import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (browserTest.skip) return;
  env = await startEnv('log_level = "debug"\n');
});
after(() => env?.stop());

test('the logs view opens on the backlog: a failed request with its status and error, followed by its request id', browserTest, async () => {
  // Failed before the view opens: it is in the backlog, not the live stream.
  const failed = await env!.k.request('/api/agents/00000000-0000-4000-8000-000000000000');
  assert.equal(failed.status, 404);
  const { error } = (await failed.json()) as { error: string };
  const reqId = failed.headers.get('x-request-id')!;
  const { page, problems } = await openPage(env!, '/#/logs');
  const line = page.locator('.log-line', { hasText: '/api/agents/00000000-0000-4000-8000-000000000000' }).filter({ hasText: 'request completed' });
  await line.waitFor();
  for (const part of ['info', 'agents', 'GET', '404', 'ms', error, reqId.slice(0, 8)])
    assert.ok((await line.innerText()).includes(part), `the line shows ${part}`);
  // The whole record, as text.
  await line.getByRole('button', { name: 'Show the whole record' }).click();
  const record = JSON.parse(await line.locator('pre.log-record').innerText()) as { reqId: string; statusCode: number; error: string };
  assert.deepEqual({ reqId: record.reqId, statusCode: record.statusCode, error: record.error }, { reqId, statusCode: 404, error });
  // Following the request id: only its lines (the refusal logged at debug, and the access line).
  await page.getByLabel('Lowest level').selectOption('debug');
  await page.locator('.log-line', { hasText: 'request completed' }).first().waitFor();
  await line.getByRole('button', { name: `Follow request ${reqId}` }).click();
  await page.getByText(`Following request ${reqId}`).waitFor();
  const texts = await waitFor(
    async () => {
      const all = await page.locator('.log-line').allInnerTexts();
      return all.length > 0 && all.every((t) => t.includes(reqId.slice(0, 8))) ? all : undefined;
    },
    8000,
    "only the request's lines",
  );
  assert.ok(texts!.some((t) => t.includes('request completed')));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'logs-request');
  await page.getByRole('button', { name: 'Stop following' }).click();

  // Filters: a module, then a text; pausing holds the lines.
  await page.getByLabel('Module').fill('agents');
  await waitFor(
    async () => {
      const modules = await page.locator('.log-line .module').allInnerTexts();
      return modules.length > 0 && modules.every((m) => m === 'agents');
    },
    8000,
    'only the agents module',
  );
  await page.getByLabel('Module').fill('');
  await page.getByLabel('Text').fill('no line holds this text');
  await waitFor(async () => (await page.locator('.log-line').count()) === 0, 8000, 'no line left');
  await page.getByLabel('Text').fill('');
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByText(/, paused\./).waitFor();
  // Backlog lines the stream had already read when it was ended still go in: count once they have.
  await new Promise((r) => setTimeout(r, 300));
  const held = await page.locator('.log-line').count();
  await (await env!.k.request('/api/agents/not-an-id')).text();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await page.locator('.log-line').count(), held, 'no line arrives while paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.locator('.log-line', { hasText: '/api/agents/not-an-id' }).first().waitFor();
  assert.deepEqual(
    problems.filter((p) => !/status of 40\d/.test(p)),
    [],
  );
});

test('a log line that holds markup shows it as text', browserTest, async () => {
  env!.k.kernel.log.warn({ err: { message: '<img src=x id=injected>' } }, '<b id="bold">not bold</b>');
  const { page } = await openPage(env!, '/#/logs');
  const line = page.locator('.log-line', { hasText: '<b id="bold">not bold</b>' });
  await line.waitFor();
  await line.getByRole('button', { name: 'Show the whole record' }).click();
  assert.equal(await page.locator('#bold, #injected').count(), 0);
  assert.match(await line.innerText(), /<img src=x id=injected>/);
});
