/**
 * The smaller points of the dashboard (issue 26, item 7): providers and models usable first with where each key comes
 * from and the default model set there; the usage charts' axis titles, dates and units in both themes with legends that
 * give values; the schedules' next run in the viewer's time zone, named; the MCP servers' state live and a custom
 * server's environment; the hub's offline state in words; counts with the right plural; a new view opening at the top.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, refuseDialogs, spawn, startEnv, type Env } from './helpers.ts';

const NOTES = path.join(import.meta.dirname, 'fixtures', 'mcp-notes.mjs');
/** A key in the service's environment (the catalog reads it per request), so one provider's key_source is "environment". */
const ENV_KEY = 'MISTRAL_API_KEY';

let env: Env | undefined;
let hadEnvKey: string | undefined;
before(async () => {
  if (browserTest.skip) return;
  hadEnvKey = process.env[ENV_KEY];
  process.env[ENV_KEY] = 'mistral-key-from-the-environment';
  // Groq's API is the FakeProvider; the hub's registry is an index at a closed port of this machine (nothing listens).
  env = await startEnv(
    (fake) => `[provider_urls]\ngroq = "${fake}/v1"\n[hub]\nregistry_url = "http://127.0.0.1:9/index.json"\nmirror_url = "http://127.0.0.1:9/index.json"\n`,
    ['scheduler', 'mcp', 'skills', 'prompt-guard', 'hub'],
  );
});
after(async () => {
  await env?.stop();
  if (hadEnvKey === undefined) delete process.env[ENV_KEY];
  else process.env[ENV_KEY] = hadEnvKey;
});

test('providers: usable first, each with where its key comes from; models usable first; the default model set there', browserTest, async () => {
  assert.equal((await env!.k.request('/api/providers/groq/key', { method: 'POST', json: { api_key: 'gsk-polish-test' } })).status, 200);
  const { page, problems } = await openPage(env!, '/#/models');
  const providers = page.getByRole('table').first();
  await providers.getByRole('row', { name: /^Groq/ }).getByText('a stored key', { exact: true }).waitFor();
  await providers
    .getByRole('row', { name: /^Mistral/ })
    .getByText(`the environment (${ENV_KEY})`, { exact: true })
    .waitFor();
  await providers
    .getByRole('row', { name: /^Anthropic/ })
    .getByText('no key: store one, or set ANTHROPIC_API_KEY', { exact: true })
    .waitFor();
  // Every usable row comes before every one without its key.
  const marks = await providers.locator('tbody tr [data-testid="key-source"] .badge').allTextContents();
  assert.ok(marks.length > 3, `rows: ${marks.join(', ')}`);
  assert.deepEqual(
    marks,
    [...marks].sort((a, b) => Number(a === 'no key') - Number(b === 'no key')),
    'usable first',
  );
  assert.equal(marks[0], 'usable');
  assert.ok(marks.includes('no key'));

  // The models of usable providers come first too.
  const models = page.getByRole('table').nth(1);
  await models.locator('tbody tr').first().waitFor();
  const modelProviders = await models.locator('tbody tr td:first-of-type').allTextContents();
  const unusable = modelProviders.map((t) => t.endsWith('no key'));
  assert.deepEqual(
    unusable,
    [...unusable].sort((a, b) => Number(a) - Number(b)),
    'models of usable providers first',
  );
  assert.equal(unusable[0], false);

  // The default model: shown, and set from the usable providers' models through the config API.
  await page
    .getByTestId('default-model')
    .getByText(/^openai\//)
    .waitFor();
  const choice = page.getByLabel('Make another the default');
  const groqModel = await choice.locator('optgroup[label="Groq"] option').first().getAttribute('value');
  assert.ok(groqModel, 'a model of Groq is offered');
  assert.equal(await choice.locator('optgroup[label="Anthropic"]').count(), 0, 'a provider without its key is not offered');
  await choice.selectOption(groqModel);
  await page.getByRole('button', { name: 'Make it the default' }).click();
  const [, model] = JSON.parse(groqModel) as [string, string];
  await page.getByText(`groq/${model} is the default model.`).waitFor();
  await page.getByTestId('default-model').getByText(`groq/${model}`).waitFor();
  const config = (await (await env!.k.request('/api/config')).json()) as { default_model: Record<string, unknown> };
  assert.deepEqual(
    {
      provider: config.default_model.provider,
      model: config.default_model.model,
      api_key_env: config.default_model.api_key_env,
      base_url: config.default_model.base_url,
    },
    { provider: 'groq', model, api_key_env: '', base_url: '' },
  );
  await models
    .getByRole('row', { name: new RegExp(model.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) })
    .first()
    .getByText('default', { exact: true })
    .waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

/** The texts drawn on the page's canvases, with the colour each was drawn in (uPlot draws its axes as text). */
const RECORD_CANVAS_TEXT = `(() => {
  window.__drawn = [];
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__drawn.push({ text: String(text), colour: String(this.fillStyle) });
    return fillText.call(this, text, ...rest);
  };
})()`;

/** WCAG's contrast ratio of two colours given as #rrggbb or rgb(r, g, b). */
function contrast(a: string, b: string): number {
  const rgb = (c: string) => (c.startsWith('#') ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : (c.match(/\d+/g) ?? []).slice(0, 3).map(Number));
  const lum = (c: string) => {
    const [r, g, b] = rgb(c).map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('usage charts: axes titled with their units and days as dates, readable in both themes; legends give values', browserTest, async () => {
  const id = await spawn(env!.k, 'name = "counted"\n');
  env!.fake.enqueue({ text: 'counted' });
  assert.equal((await env!.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'count me' } })).status, 200);
  const { page, problems } = await openPage(env!, '/#/home');
  await page.addInitScript(RECORD_CANVAS_TEXT);
  await page.evaluate(() => (location.hash = '#/usage'));
  await page.reload();
  await page.getByRole('figure', { name: 'Cost by day (USD)' }).locator('canvas').waitFor();
  await page.getByRole('figure', { name: 'Tokens by model' }).locator('canvas').waitFor();
  const today = new Date();
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][today.getUTCMonth()];
  const day = `${month} ${today.getUTCDate()}`;
  const byModel = (await (await env!.k.request('/api/usage/by-model')).json()) as { models: { model: string }[] };
  assert.ok(byModel.models.length > 0, 'the turn was metered');
  const drawn = () => page.evaluate(() => (window as unknown as { __drawn: { text: string; colour: string }[] }).__drawn);
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.evaluate(() => ((window as unknown as { __drawn: unknown[] }).__drawn = []));
      await page.getByRole('button', { name: 'Dark theme' }).click();
    }
    await waitFor(async () => (await drawn()).some((d) => d.text === 'Cost (USD)'), 5000, `the charts drawn (${theme})`);
    const texts = await drawn();
    const seen = new Set(texts.map((d) => d.text));
    for (const title of ['Day (UTC)', 'Tokens', 'Cost (USD)', 'Model', day, byModel.models[0].model])
      assert.ok(seen.has(title), `${theme}: "${title}" drawn on an axis (drawn: ${[...seen].join(' | ')})`);
    assert.ok(
      texts.some((d) => /^\$\d/.test(d.text)),
      `${theme}: cost ticks in dollars`,
    );
    const bg = await background();
    for (const d of texts) assert.ok(contrast(d.colour, bg) >= 4.5, `${theme}: "${d.text}" in ${d.colour} on ${bg}: ${contrast(d.colour, bg).toFixed(2)}`);
  }
  // The legend gives each series' total (the turn's tokens), and the cost in dollars.
  const usage = (await (await env!.k.request('/api/usage/summary')).json()) as { today: { input_tokens: number } };
  const tokens = page.getByRole('figure', { name: 'Tokens by day' }).getByRole('list', { name: /legend/ });
  await tokens.getByText(`Input tokens: ${usage.today.input_tokens.toLocaleString('en-US')} in all`).waitFor();
  await page
    .getByRole('figure', { name: 'Cost by day (USD)' })
    .getByRole('list', { name: /legend/ })
    .getByText(/^Cost: \$\d+\.\d+ in all$/)
    .waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test("schedules: columns named for what they hold; the next run in the viewer's time zone, named; counts in the singular", browserTest, async () => {
  const agent = await spawn(env!.k, 'name = "early-bird"\n');
  const made = await env!.k.request('/api/schedules', {
    method: 'POST',
    json: { name: 'digest', agent_id: agent, cron: '30 7 * * *', tz: 'UTC', prompt: 'Write the digest' },
  });
  const { next_run } = (await made.json()) as { next_run: string };
  assert.equal(made.status, 201, next_run);
  // Tokyo is UTC+09:00 all year: 07:30 UTC is 16:30 there.
  const { page, problems } = await openPage(env!, '/#/schedules', { timezoneId: 'Asia/Tokyo' });
  const table = page.getByRole('table');
  for (const heading of [
    'Schedule',
    'When (cron or interval, in its time zone)',
    'Agent and message',
    'Next run (Asia/Tokyo, UTC+09:00)',
    'Last run and outcome',
  ])
    await table.getByRole('columnheader', { name: heading, exact: true }).waitFor();
  await page.getByText('Times are in your time zone: Asia/Tokyo, UTC+09:00.').waitFor();
  const local = new Date(Date.parse(next_run) + 9 * 3600_000).toISOString().replace('T', ' ').slice(0, 19);
  assert.match(local, / 16:30:00$/);
  const row = table.getByRole('row', { name: /digest/ });
  assert.equal(await row.getByTestId('next-run').textContent(), local);
  await row.getByText('in UTC').waitFor();
  await page.getByText('1 schedule', { exact: true }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test("MCP: a custom server's env from key/value rows (secret values hidden); the servers' state live; one removed in two steps", browserTest, async () => {
  const watched = await openPage(env!, '/#/mcp');
  const { page, problems } = watched;
  refuseDialogs(watched);
  await page.getByText('No MCP server is configured.').waitFor();
  const form = page.locator('form', { has: page.getByRole('heading', { name: 'Add a server' }) });
  await form.getByLabel('Name', { exact: true }).fill('notes-custom');
  await form.getByLabel('Command with its arguments').fill(`${process.execPath} ${NOTES}`);
  await form.getByRole('button', { name: 'Add a variable' }).click();
  const row = form.getByRole('group', { name: 'Variable 1' });
  await row.getByLabel('Variable name').fill('NOTES_TOKEN');
  const value = row.getByLabel('Value');
  assert.equal(await value.getAttribute('type'), 'password', 'a token is a secret: its value is hidden');
  await value.fill('notes-secret-value');
  // A second row, not a secret by its name, then removed.
  await form.getByRole('button', { name: 'Add a variable' }).click();
  const second = form.getByRole('group', { name: 'Variable 2' });
  await second.getByLabel('Variable name').fill('NOTES_LANG');
  assert.equal(await second.getByLabel('Value').getAttribute('type'), 'text');
  await second.getByRole('button', { name: 'Remove variable 2' }).click();
  await form.getByRole('button', { name: 'Add server' }).click();
  await form.getByText('Added: it connects in the background').waitFor();
  // The fixture starts only with the right NOTES_TOKEN: connected with its tool, shown without a reload.
  const servers = page.getByRole('table');
  const custom = servers.getByRole('row', { name: /notes-custom/ });
  await custom.getByText('note_count').waitFor({ timeout: 20_000 });
  await custom.getByText('connected', { exact: true }).waitFor();
  assert.doesNotMatch(await (await env!.k.request('/api/mcp/servers')).text(), /notes-secret-value/);
  // A server added elsewhere (the API) shows up by itself, failing (its token is wrong), with its error.
  const wrong = await env!.k.request('/api/mcp/servers', {
    method: 'POST',
    json: { name: 'notes-wrong', transport: { type: 'stdio', command: process.execPath, args: [NOTES] }, env: { NOTES_TOKEN: 'wrong' } },
  });
  assert.ok(wrong.status < 300, await wrong.text());
  await servers
    .getByRole('row', { name: /notes-wrong/ })
    .locator('.error')
    .waitFor({ timeout: 20_000 });
  await page.getByText('2 servers', { exact: true }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  // Removing asks in the row first (no browser dialog): the first click removes nothing.
  const failing = servers.getByRole('row', { name: /notes-wrong/ });
  await failing.getByRole('button', { name: 'Remove notes-wrong' }).click();
  await failing.getByRole('group', { name: 'Remove notes-wrong?' }).waitFor();
  assert.deepEqual(await axeViolations(page), [], 'the question in the row');
  const names = async () => ((await (await env!.k.request('/api/mcp/servers')).json()) as { servers: { name: string }[] }).servers.map((s) => s.name);
  assert.ok((await names()).includes('notes-wrong'), 'kept until the second click');
  await failing.getByRole('button', { name: 'Remove notes-wrong now' }).click();
  await page.getByText('1 server', { exact: true }).waitFor();
  assert.deepEqual(await names(), ['notes-custom']);
  assert.deepEqual(problems, []);
});

test('hub offline: what happened and what to do, in words; the raw error only under Details', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/skills');
  const box = page.getByTestId('hub-offline');
  await box.getByText('The hub registry cannot be reached.').waitFor();
  await box.getByText('No copy of it has been read yet, so there is nothing to list or install from the hub.').waitFor();
  await box.getByText('[hub] registry_url').waitFor();
  const raw = (await (await env!.k.request('/api/hub/browse')).json()) as { offline: boolean; error: string };
  assert.equal(raw.offline, true);
  assert.ok(raw.error);
  assert.equal(await box.getByText(raw.error).isVisible(), false, 'the raw error is folded away');
  await box.getByText('Details').click();
  await box.getByText(raw.error).waitFor();
  await box.getByRole('button', { name: 'Try again' }).click();
  await page.getByText('The registry still cannot be reached.').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('a new view opens at the top of the page; a sub-route too', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/models');
  await page.getByRole('table').nth(1).locator('tbody tr').nth(20).waitFor();
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await waitFor(async () => (await page.evaluate(() => window.scrollY)) > 500, 2000, 'the page scrolled down');
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Schedules' }).click();
  await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
  assert.equal(await page.evaluate(() => window.scrollY), 0);
  // Back on the long page, scrolled down again, then a sub-route of the same view.
  await page.goBack();
  await page.getByRole('table').nth(1).locator('tbody tr').nth(20).waitFor();
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await waitFor(async () => (await page.evaluate(() => window.scrollY)) > 500, 2000, 'the page scrolled down');
  await page.evaluate(() => (location.hash = '#/models/groq'));
  await waitFor(async () => (await page.evaluate(() => window.scrollY)) === 0, 2000, 'the sub-route at the top');
  assert.deepEqual(problems, []);
});
