/** Workflow templates in the browser: browse (search, category), fill the parameters, instantiate, run; and where MCP catalogue entries come from. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { axeViolations, browserTest, openPage, screenshot, spawn, startEnv, type Env } from './helpers.ts';

/** A registry folder in the hub's layout: two workflow templates and one MCP template. */
function registry(root: string): string {
  const dir = path.join(root, 'registry');
  const put = (rel: string, lines: string[]) => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), lines.join('\n'));
  };
  const param = (name: string, type: string, required: boolean, extra: string[] = []) => [
    '[[parameters]]',
    `name = "${name}"`,
    `description = "the ${name}"`,
    `param_type = "${type}"`,
    `required = ${required}`,
    ...extra,
  ];
  const step = (name: string, prompt: string, after: string[] = []) => [
    '[[steps]]',
    `name = "${name}"`,
    `prompt_template = "${prompt}"`,
    ...(after.length ? [`depends_on = ${JSON.stringify(after)}`] : []),
  ];
  put('workflows/brief.toml', [
    'id = "brief"',
    'name = "Brief Writer"',
    'description = "Researches and outlines a topic side by side, then drafts a brief."',
    'category = "writing"',
    'tags = ["writing"]',
    ...param('topic', 'string', true),
    ...param('audience', 'string', false, ['default = "general"']),
    ...param('length', 'number', false, ['default = 300']),
    ...param('formal', 'boolean', false, ['default = false']),
    ...step('research', 'Research {{topic}} for {{audience}}.'),
    ...step('outline', 'Outline {{topic}} in {{length}} words.'),
    ...step('draft', 'Draft (formal: {{formal}}) from {{research}} and {{outline}}.', ['research', 'outline']),
  ]);
  put('workflows/triage.toml', [
    'id = "triage"',
    'name = "Bug Triage"',
    'description = "Classifies a bug report."',
    'category = "engineering"',
    ...param('report', 'string', true),
    ...step('classify', 'Classify {{report}}'),
  ]);
  put('mcp/cloud-files.toml', [
    'id = "cloud-files"',
    'name = "Cloud Files"',
    'description = "Files in a cloud drive"',
    'category = "storage"',
    '[transport]',
    'type = "stdio"',
    'command = "npx"',
    'args = ["-y", "cloud-files-test-fixture"]',
  ]);
  return dir;
}

let env: Env | undefined;
let root: string;
before(async () => {
  if (browserTest.skip) return;
  root = mkdtempSync(path.join(tmpdir(), 'dashboard-templates-'));
  const config = ['[hub]', `registry_url = ${JSON.stringify(registry(root))}`, 'sync_interval_secs = 0'].join('\n');
  env = await startEnv(config, ['workflows', 'tasks', 'hub', 'skills', 'prompt-guard', 'mcp', 'extensions']);
});
after(async () => {
  await env?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

test(
  'a template is found (sync, category, search), its parameters filled, instantiated and run; the workflow saved back as a template',
  browserTest,
  async () => {
    await spawn(env!.k, 'name = "writer"\n');
    const { page, problems } = await openPage(env!, '/#/workflows');
    await page.getByRole('link', { name: 'From a template' }).click();
    await page.getByText('The hub registry has not been synced yet').waitFor();
    await page.getByRole('button', { name: 'Sync the registry' }).click();
    const cards = page.locator('.cards .card h2');
    await page.getByRole('heading', { name: /Brief Writer/ }).waitFor();
    assert.deepEqual(await cards.allTextContents(), ['Brief Writer hub registry', 'Bug Triage hub registry']);
    await page.getByLabel('Category').selectOption({ label: 'engineering (1)' });
    await page.getByRole('heading', { name: /Brief Writer/ }).waitFor({ state: 'detached' });
    // The list is empty while the filtered listing loads: wait for its answer before reading the cards.
    await page.getByRole('heading', { name: /Bug Triage/ }).waitFor();
    assert.deepEqual(await cards.allTextContents(), ['Bug Triage hub registry']);
    await page.getByLabel('Category').selectOption('');
    await page.getByLabel('Search templates').fill('side by side');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: /Bug Triage/ }).waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: /Brief Writer/ }).waitFor();
    assert.deepEqual(await cards.allTextContents(), ['Brief Writer hub registry']);
    assert.deepEqual(await axeViolations(page), []);
    await screenshot(page, 'workflow-templates');

    await page.getByRole('link', { name: 'Use Brief Writer' }).click();
    await page.getByRole('heading', { name: 'Brief Writer', level: 1 }).waitFor();
    // Typed inputs with the defaults filled in; the required one marked and required.
    const topic = page.getByLabel(/^topic/);
    assert.equal(await topic.getAttribute('required'), '');
    assert.match((await page.locator('label[for="param-topic"]').textContent()) ?? '', /\(required\)/);
    assert.equal(await page.getByLabel(/^audience/).inputValue(), 'general');
    assert.equal(await page.getByLabel(/^length/).getAttribute('type'), 'number');
    assert.equal(await page.getByLabel(/^length/).inputValue(), '300');
    assert.equal(await page.getByLabel(/^formal/).isChecked(), false);
    await topic.fill('otters');
    await page.getByLabel(/^length/).fill('150');
    await page.getByLabel(/^formal/).check();
    // No agent chosen and none named "default": the service's refusal is shown in its words.
    await page.getByRole('button', { name: 'Create the workflow' }).click();
    await page.getByText(/no agent has the id or name 'default'/).waitFor();
    await page.getByRole('combobox', { name: 'Agent that runs the steps' }).fill('writ');
    await page.getByRole('option', { name: /writer/ }).click();
    assert.deepEqual(await axeViolations(page), []);
    await screenshot(page, 'workflow-template-form');
    await page.getByRole('button', { name: 'Create the workflow' }).click();

    await page.getByRole('heading', { name: 'Brief Writer', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
    assert.match((await page.locator('.step-summary').textContent()) ?? '', /draft — sequential after research, outline, writer/);
    env!.fake.requests.length = 0;
    env!.fake.setFallback({ text: 'unused' });
    env!.fake.enqueue({ text: 'R', delayMs: 100 }, { text: 'O', delayMs: 100 }, { text: 'the brief' });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByText('Run completed').waitFor();
    const prompts = env!.fake.requests.map((r) => {
      const messages = r.body.messages as Array<{ role: string; content: unknown }>;
      return String(messages.filter((m) => m.role === 'user').at(-1)?.content);
    });
    assert.deepEqual(prompts.slice(0, 2).sort(), ['Outline otters in 150 words.', 'Research otters for general.']);
    assert.match(prompts[2], /^Draft \(formal: true\) from (R and O|O and R)\.$/);

    // The editor shows what each step runs after; a renamed step stays a dependency of the steps after it. (Saving an
    // edited workflow once failed — the editor sent back the null backoff_ms the service had read out — and the view
    // then showed the steps from before the edit.)
    await page.getByRole('link', { name: 'Edit steps' }).click();
    const step = (i: number) => page.getByRole('group', { name: `Step ${i}` });
    const after = (i: number) => step(i).getByRole('group', { name: /Runs after/ });
    assert.equal(await after(3).getByLabel('research').isChecked(), true);
    assert.equal(await after(3).getByLabel('outline').isChecked(), true);
    assert.equal(await after(1).getByLabel('outline').isChecked(), false);
    await step(1).getByLabel('Name', { exact: true }).fill('study');
    assert.equal(await after(3).getByLabel('study').isChecked(), true);
    await page.getByRole('button', { name: 'Save workflow' }).click();
    await page.getByText(/draft — sequential after study, outline/).waitFor();

    await page.getByRole('button', { name: 'Save as template' }).click();
    await page.getByText('Saved as the template brief-writer').waitFor();
    await page.getByRole('link', { name: '← All workflows' }).click();
    await page.getByRole('link', { name: 'From a template' }).click();
    await page.getByRole('heading', { name: /Brief Writer saved/ }).waitFor();
    assert.deepEqual(
      problems.filter((p) => !/status of 400/.test(p)),
      [],
    );
  },
);

test('the MCP catalogue says where each entry comes from, and updates from the registry', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/mcp');
  const card = (name: string) => page.locator('.cards .card', { has: page.getByRole('heading', { name: new RegExp(`^${name}`) }) });
  await page.getByLabel('Filter the catalogue').fill('fetch');
  await card('Fetch').getByText('shipped').waitFor();
  await page.getByRole('button', { name: 'Update from the registry' }).click();
  await page.getByText(/Updated: 1 entry from the hub registry/).waitFor();
  await page.getByLabel('Filter the catalogue').fill('cloud');
  await card('Cloud Files').getByText('(storage · hub registry)').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});
