import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, browserTest, openPage, startEnv, type Env } from './helpers.ts';

const KEY = 'dashboard-test-key-0123456789';
let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv(`api_key = "${KEY}"`);
});
after(() => env?.stop());

test('with an api_key: the app loads without console errors, asks for the key and refuses a wrong one', browserTest, async () => {
  const { page, problems } = await openPage(env!);
  await page.getByLabel('API key').waitFor();
  assert.deepEqual(await axeViolations(page), [], 'sign-in screen: no serious accessibility violations');
  await page.getByLabel('API key').fill('wrong-key-0123456789');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That key was refused').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), null, 'a refused key is not kept');
  // The refusal is a 401 the browser reports as a failed resource; nothing else went wrong.
  assert.deepEqual(
    problems.filter((p) => !/401/.test(p)),
    [],
  );
});

test('the right key signs in; it is kept for the tab only and never put in a URL', browserTest, async () => {
  const { page, problems } = await openPage(env!);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), KEY);
  assert.equal(await page.evaluate(() => localStorage.getItem('talon.api_key')), null);
  assert.ok(!page.url().includes(KEY));
  for (const title of ['Chat', 'Agents', 'Models & providers', 'Memory', 'Usage & budgets', 'Live logs', 'Security', 'Configuration', 'Modules']) {
    assert.ok(await page.getByRole('link', { name: title, exact: true }).isVisible(), `${title} is listed`);
  }
  assert.deepEqual(problems, []);
});

test('a 401 at any point returns to sign-in', browserTest, async () => {
  const { page } = await openPage(env!);
  await page.evaluate((k) => sessionStorage.setItem('talon.api_key', k), KEY);
  await page.reload();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  // The key stops being valid (rotated on the server, say): the next call answers 401.
  await page.evaluate(() => sessionStorage.setItem('talon.api_key', 'rotated-away-0123456789'));
  await page.evaluate(() => (location.hash = '#/modules'));
  await page.getByLabel('API key').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), null);
});
