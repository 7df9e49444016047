import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, spawn, startEnv, wholeAgentListReads, type Env } from './helpers.ts';

let env: Env | undefined;
let agentId = '';
before(async () => {
  if (browserTest.skip) return;
  // Groq's API is the FakeProvider here, so its connectivity test stays on this machine.
  env = await startEnv((fake) => `log_level = "info"\n[provider_urls]\ngroq = "${fake}/v1"`);
  agentId = await spawn(env.k, 'name = "rememberer"\n[capabilities]\nmemory_write = ["self.*"]\nmemory_read = ["self.*"]\n');
});
after(() => env?.stop());

test('the configuration form is generated from the schema and saves a value', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/config');
  await page.getByLabel('Find a setting').fill('max_iterations');
  const field = page.getByLabel('agents.max_iterations', { exact: true });
  assert.equal(await field.inputValue(), '50');
  assert.equal(await field.getAttribute('type'), 'number');
  await field.fill('42');
  await page.getByRole('button', { name: 'Save agents' }).click();
  await page.getByText('agents.max_iterations saved').waitFor();
  const config = (await (await env!.k.request('/api/config')).json()) as { agents: { max_iterations: number } };
  assert.equal(config.agents.max_iterations, 42);
  // The browser checks what the schema lets it (min = 1): 0 is not even sent.
  await field.fill('0');
  await page.getByRole('button', { name: 'Save agents' }).click();
  assert.equal(await field.evaluate((el) => (el as HTMLInputElement).validity.rangeUnderflow), true);
  // A value the service refuses is shown beside its field, in the service's words.
  await page.getByLabel('Find a setting').fill('api_listen');
  await page.getByLabel('api_listen', { exact: true }).fill('not an address');
  await page.getByRole('button', { name: 'Save General' }).click();
  await page.getByText("invalid value for 'api_listen'", { exact: false }).first().waitFor();
  assert.equal(await page.getByLabel('api_listen', { exact: true }).getAttribute('aria-invalid'), 'true');
  assert.deepEqual(
    problems.filter((p) => !/status of 400/.test(p)),
    [],
  );
});

test('a provider key is saved (never shown back), tested against the provider, and removed', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/models');
  await page.getByLabel('Filter providers').fill('groq');
  const row = page.getByRole('row', { name: /^Groq/ });
  const field = row.getByLabel('API key for Groq');
  assert.equal(await field.getAttribute('type'), 'password');
  await field.fill('gsk-dashboard-test-key-123');
  await row.getByRole('button', { name: 'Save' }).click();
  await row.getByText('Key saved').waitFor();
  await row.getByText('a stored key', { exact: true }).waitFor();
  assert.equal(await field.inputValue(), '', 'the field is emptied, not filled back');
  for (const p of ['/api/providers', '/api/providers/groq'])
    assert.doesNotMatch(await (await env!.k.request(p)).text(), /gsk-dashboard-test-key-123/, `${p} does not show the key`);
  await row.getByRole('button', { name: 'Test' }).click();
  await row.getByText(/^OK: fake-model answered in \d+ ms$/).waitFor();
  await row.getByRole('button', { name: 'Remove key' }).click();
  await row.getByText('Key removed').waitFor();
  await row.getByText(/^no key: store one, or set GROQ_API_KEY$/).waitFor();
  assert.deepEqual(problems, []);
});

test('secrets in the configuration form are never shown back', browserTest, async () => {
  const { page } = await openPage(env!, '/#/config');
  await page.getByLabel('Find a setting').fill('api_key');
  const key = page.getByLabel('api_key', { exact: true });
  assert.equal(await key.getAttribute('type'), 'password');
  assert.equal(await key.inputValue(), '');
});

const VIEWS: [string, string, (page: import('playwright-core').Page) => Promise<unknown>][] = [
  [
    'models',
    'Models & providers',
    (p) =>
      p
        .getByRole('row', { name: /Anthropic/ })
        .first()
        .waitFor(),
  ],
  ['memory', 'Memory', (p) => p.getByRole('row', { name: /favourite_colour/ }).waitFor()],
  // Requests are logged (info): keep making some until the stream has shown one.
  ['logs', 'Live logs', (p) => waitFor(async () => (await env!.k.request('/api/agents'), await p.locator('.log-lines li').count()), 8000, 'a log line')],
  ['security', 'Security', (p) => p.getByRole('row', { name: /security headers/ }).waitFor()],
  ['config', 'Configuration', (p) => p.getByLabel('log_level', { exact: true }).waitFor()],
  ['modules', 'Modules', (p) => p.getByRole('row', { name: /^dashboard/ }).waitFor()],
];

for (const [id, title, ready] of VIEWS) {
  test(`the ${id} view loads without console errors and without serious accessibility violations`, browserTest, async () => {
    if (id === 'memory')
      assert.equal((await env!.k.request(`/api/memory/agents/${agentId}/kv/favourite_colour`, { method: 'PUT', json: { value: 'blue' } })).status, 200);
    const { page, problems, reads } = await openPage(env!, `/#/${id}`);
    await page.getByRole('heading', { name: title, level: 1 }).waitFor();
    await ready(page);
    assert.deepEqual(wholeAgentListReads(reads), [], `${id}: agents are read a page at a time`);
    assert.deepEqual(await axeViolations(page), [], `${id}: accessibility`);
    await screenshot(page, id);
    assert.deepEqual(problems, [], `${id}: console`);
    await page.context().close();
  });
}

test('the dark theme is kept across reloads and passes the same checks', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/modules');
  await page.getByRole('button', { name: 'Dark theme' }).click();
  // The theme is applied by the app's next render, not within the click.
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark', undefined, { timeout: 5_000 });
  await page.reload();
  await page.getByRole('row', { name: /^dashboard/ }).waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'modules-dark');
  assert.deepEqual(problems, []);
});

test('on a narrow screen the navigation folds behind the Menu button', browserTest, async () => {
  const { page } = await openPage(env!, '/#/security');
  await page.setViewportSize({ width: 390, height: 800 });
  const nav = page.getByRole('navigation', { name: 'Views' });
  assert.equal(await nav.isVisible(), false);
  await page.getByRole('button', { name: 'Menu' }).click();
  assert.equal(await nav.isVisible(), true);
  await nav.getByRole('link', { name: 'Modules' }).click();
  await page.getByRole('heading', { name: 'Modules', level: 1 }).waitFor();
  assert.equal(await nav.isVisible(), false, 'folds again after choosing');
});
