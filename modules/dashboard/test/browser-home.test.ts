/**
 * The home (the system module's view) and its guided first run: from an empty home, a visit lands on the setup,
 * chooses a provider (the scripted FakeProvider behind OpenAI's URL setting; Ollama "detected" at the same fake),
 * stores and tests a key, makes a model the default, creates an agent from a template and gets a streamed reply in its
 * chat; then the home's sections, with a provider test and a failed turn.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';
import type { Browser } from 'playwright-core';
import { axeViolations, browserTest, launch, MODULES, screenshot } from './helpers.ts';

let fake: FakeProvider;
let k: TestKernel;
let browser: Browser;
const saved = process.env.OPENAI_API_KEY;

before(async () => {
  if (browserTest.skip) return;
  delete process.env.OPENAI_API_KEY;
  fake = new FakeProvider();
  await fake.start();
});

after(async () => {
  await browser?.close();
  await k?.stop();
  await fake?.stop();
  if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
});

test('first run: from an empty home to a streamed reply, then the home with its sections', browserTest, async () => {
  // No [default_model] and no key: OpenAI's URL is the fake's (the catalog's provider URL setting); the local runtimes
  // are probed by the service at the addresses given here, Ollama's being the fake (it answers GET /api/tags).
  const dead = 'http://127.0.0.1:9';
  k = await startTestKernel({
    only: [...MODULES, 'templates', 'approvals'],
    config: `[provider_urls]\nopenai = "${fake.url}/v1"\n\n[catalog.detect_urls]\nollama = "${fake.url}"\nlmstudio = "${dead}"\nvllm = "${dead}"\nllamacpp = "${dead}"\n`,
  });
  browser = await launch();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));

  // A visit without a route lands on the chat, which sends a home without agents to the guided setup.
  await page.goto(k.url + '/');
  await page.getByRole('heading', { name: 'Set up Talon' }).waitFor();
  assert.equal(new URL(page.url()).hash, '#/home');
  assert.equal(await page.locator('nav a').first().textContent(), 'Home', 'the home is first in the navigation');
  const options = await page.locator('#setup-provider option').allTextContents();
  assert.match(options[0], /^Ollama — no key needed: a local runtime at http:\/\/127\.0\.0\.1:\d+$/, 'a detected runtime is ready, first');
  assert.ok(options.some((o) => /^OpenAI — no key yet$/.test(o)));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'setup');

  await page.locator('#setup-provider').selectOption('openai');
  await page.getByRole('button', { name: 'Use this provider' }).click();
  await page.getByLabel('API key').fill('sk-first-run');
  await page.getByRole('button', { name: 'Save the key' }).click();
  await page.getByText('The key is stored').waitFor();
  assert.equal(await page.getByLabel('API key').inputValue(), '', 'the field is emptied, never filled back');
  await page.getByRole('button', { name: 'Test the connection' }).click();
  await page.getByText(/OpenAI answers \(\d+ ms\)/).waitFor();
  assert.equal(fake.requests.at(-1)!.path, '/v1/models');
  assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-first-run');

  await page.locator('#setup-model option').first().waitFor({ state: 'attached' });
  assert.equal(await page.locator('#setup-model').inputValue(), 'fake-model', 'what the provider listed comes first');
  await page.getByRole('button', { name: 'Make it the default' }).click();
  await page.getByText('openai/fake-model is the default model.').waitFor();
  const config = (await (await k.request('/api/config')).json()) as { default_model: { provider: string; model: string } };
  assert.deepEqual([config.default_model.provider, config.default_model.model], ['openai', 'fake-model']);

  await page.locator('#setup-template').selectOption('translator');
  await page.getByRole('button', { name: 'Create it and open its chat' }).click();
  await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/);
  fake.enqueue({ text: 'Bonjour, I translate for you.', chunkSize: 3, chunkDelayMs: 30 });
  await page.getByLabel('Message', { exact: true }).fill('Hello');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('Bonjour', { exact: false }).waitFor();
  await page.getByText('Bonjour, I translate for you.').waitFor();
  const sent = fake.requests.at(-1)!;
  assert.equal(sent.path, '/v1/chat/completions');
  assert.equal(sent.body.model, 'fake-model');
  assert.equal(sent.body.stream, true);
  assert.equal(sent.headers.authorization, 'Bearer sk-first-run');

  // A failed turn, then the home: set up now, so its sections.
  const agentId = new URL(page.url()).hash.split('/').at(-1)!;
  fake.enqueue({ status: 400 }); // not retried
  assert.equal((await k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'again' } })).status, 502);
  await page.goto(k.url + '/#/home');
  await page.getByRole('heading', { name: 'Home', exact: true }).waitFor();
  for (const name of ['Health', 'Providers', 'Agents', 'Pending approvals', 'Recent failures'])
    await page.locator('main').getByRole('heading', { name, exact: true }).waitFor();
  const providers = page.locator('section[aria-labelledby="home-providers"]');
  await providers.getByRole('row', { name: /OpenAI a stored key/ }).waitFor();
  await providers.getByRole('row', { name: /Ollama no key needed/ }).waitFor();
  await providers.getByRole('button', { name: 'Test OpenAI' }).click();
  await providers.getByText(/answers \(\d+ ms\)/).waitFor();
  const agents = page.locator('section[aria-labelledby="home-agents"]');
  await agents.getByRole('link', { name: 'translator' }).waitFor();
  await agents.getByText(/Today: \$/).waitFor();
  await page.locator('section[aria-labelledby="home-approvals"]').getByText('None waiting.').waitFor();
  const failures = page.locator('section[aria-labelledby="home-failures"]');
  await failures.getByText(/LLM provider error/).waitFor();
  await failures.getByRole('link', { name: 'translator' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'home');

  // With an agent, a visit without a route stays on the chat.
  await page.goto(k.url + '/');
  await page.getByLabel('Message', { exact: true }).waitFor();
  assert.equal(new URL(page.url()).hash, '');
  assert.deepEqual(problems, []);
});
