/** The views of automation and extension: the workflow step editor and runs, goals, skills and the hub, hands, plugins, MCP. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, refuseDialogs, screenshot, spawn, startEnv, wholeAgentListReads, type Env } from './helpers.ts';

const NOTES = path.join(import.meta.dirname, 'fixtures', 'mcp-notes.mjs');

/** A registry folder (the hub's layout) with one skill, and an MCP catalogue with one entry that needs a credential. */
function fixtures(): { registry: string; catalog: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'dashboard-extend-'));
  const registry = path.join(root, 'registry');
  mkdirSync(path.join(registry, 'skills', 'sql-tuning'), { recursive: true });
  writeFileSync(
    path.join(registry, 'skills', 'sql-tuning', 'SKILL.md'),
    '---\nname: sql-tuning\ndescription: Tunes slow SQL queries\nversion: 1.2.0\nauthor: tests\ntags: [database]\n---\nRead the plan first.\n',
  );
  const catalog = path.join(root, 'catalog');
  mkdirSync(catalog);
  writeFileSync(
    path.join(catalog, 'notes.toml'),
    [
      'id = "notes"',
      'name = "Notes"',
      'description = "Counts notes"',
      'category = "productivity"',
      '[transport]',
      'type = "stdio"',
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(NOTES)}]`,
      '[[required_env]]',
      'name = "NOTES_TOKEN"',
      'label = "Notes token"',
      'help = "the token of the notes service"',
      'is_secret = true',
    ].join('\n'),
  );
  return { registry, catalog };
}

let env: Env | undefined;
before(async () => {
  if (browserTest.skip) return;
  const { registry, catalog } = fixtures();
  const config = [
    `[hub]`,
    `registry_url = ${JSON.stringify(registry)}`,
    `mirror_url = ${JSON.stringify(registry)}`,
    '[mcp]',
    `catalog_dirs = [${JSON.stringify(catalog)}]`,
  ];
  env = await startEnv(config.join('\n'), [
    'workflows',
    'tasks',
    'goals',
    'skills',
    'prompt-guard',
    'hub',
    'hands',
    'scheduler',
    'triggers',
    'plugins',
    'mcp',
    'extensions',
  ]);
});
after(() => env?.stop());

test('workflows: built in the step editor (a refusal shown on its step, steps reordered), run, and its run read back', browserTest, async () => {
  await spawn(env!.k, 'name = "drafter"\n');
  env!.fake.enqueue({ text: 'polished text' }, { text: 'drafted text' });
  const { page, problems, reads } = await openPage(env!, '/#/workflows');
  await page.getByRole('link', { name: 'New workflow' }).click();
  await page.getByLabel('Name', { exact: true }).first().fill('release notes');
  const step = (i: number) => page.getByRole('group', { name: `Step ${i}` });
  await step(1).getByLabel('Name', { exact: true }).fill('draft');
  const chooseDrafter = async (i: number) => {
    await step(i).getByRole('combobox', { name: 'Agent' }).fill('draft');
    await step(i)
      .getByRole('option', { name: /drafter/ })
      .click();
  };
  await chooseDrafter(1);
  await step(1)
    .getByLabel(/^Prompt/)
    .fill('Draft {{input}}');
  await page.getByRole('button', { name: 'Add a step' }).click();
  await step(2).getByLabel('Name', { exact: true }).fill('polish');
  // An emptied box withdraws the choice (a step's agent is optional, e.g. to collect), then it is chosen again.
  await chooseDrafter(2);
  await step(2).getByRole('combobox', { name: 'Agent' }).fill('');
  await step(2).getByRole('combobox', { name: 'Agent' }).press('Tab');
  // Empty once the effects have run, and still empty a while later (a kept choice would put its name back).
  const agentBox = step(2).getByRole('combobox', { name: 'Agent' });
  await waitFor(async () => (await agentBox.inputValue()) === '', 5_000, 'the emptied agent box');
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 300))));
  assert.equal(await agentBox.inputValue(), '');
  // Emptied and left straight after the choice, before the browser paints: the choice's own update of the box, still
  // pending then, must not put the name back over the emptied text.
  await step(2).getByRole('combobox', { name: 'Agent' }).fill('draft');
  await step(2)
    .getByRole('option', { name: /drafter/ })
    .evaluate(async (option: HTMLElement) => {
      const box = option.closest('.picker-box')!.querySelector('input')!;
      option.click();
      await new Promise((done) => setTimeout(done, 0));
      box.value = '';
      box.dispatchEvent(new InputEvent('input', { bubbles: true }));
      await new Promise((done) => setTimeout(done, 0));
      box.blur();
    });
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 300))));
  assert.equal(await agentBox.inputValue(), '', 'emptied at once after the choice');
  await chooseDrafter(2);
  await step(2)
    .getByLabel(/^Prompt/)
    .fill('Polish {{input}}');
  await step(2).getByLabel('Output variable', { exact: true }).fill('input');
  await page.getByRole('button', { name: 'Save workflow' }).click();
  await step(2).getByText("step 'polish': output_var 'input' is reserved").waitFor();
  await screenshot(page, 'workflow-editor');
  await step(2).getByLabel('Output variable', { exact: true }).fill('');
  await page.getByRole('button', { name: 'Move polish up' }).click();
  assert.equal(await step(1).getByLabel('Name', { exact: true }).inputValue(), 'polish');
  await page.getByRole('button', { name: 'Save workflow' }).click();
  await page.getByRole('heading', { name: 'release notes', level: 1 }).waitFor();
  assert.deepEqual(await page.locator('.step-summary strong').allTextContents(), ['polish', 'draft']);
  await page.getByLabel('Input').fill('the changes');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByText('Run completed').waitFor();
  await page.locator('.cards summary', { hasText: 'Completed' }).click();
  await page.getByText('drafted text').last().waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'workflows');
  assert.deepEqual(wholeAgentListReads(reads), []);
  assert.deepEqual(
    problems.filter((p) => !/status of 400/.test(p)),
    [],
  );
});

test('goals: a template makes a tree; a sub-goal is added and a status changed', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/goals');
  await page.getByLabel('From a template').selectOption({ label: 'Incident response (5 sub-goals)' });
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByText(/Created “Incident response” with 5 sub-goals/).waitFor();
  const root = page.locator('.goal-tree > li', { hasText: 'Incident response' });
  await root.locator('summary').first().click();
  const children = root.getByRole('list', { name: 'Sub-goals of Incident response' });
  await children.locator(':scope > li').nth(4).waitFor();
  assert.equal(await children.locator(':scope > li').count(), 5);
  await root.getByRole('button', { name: 'Add a sub-goal' }).first().click();
  await root.getByLabel('Title').fill('Write the postmortem');
  await root.getByRole('button', { name: 'Create goal' }).click();
  await children.getByText('Write the postmortem').waitFor();
  await root.getByLabel('Status').first().selectOption('in_progress');
  await root.locator('summary .badge', { hasText: 'in progress' }).first().waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'goals');
  assert.deepEqual(problems, []);
});

test('skills: the hub registry is browsed, a skill installed from it, then uninstalled in two steps', browserTest, async () => {
  const watched = await openPage(env!, '/#/skills');
  const { page, problems } = watched;
  refuseDialogs(watched);
  const row = page.getByRole('row', { name: /sql-tuning 1\.2\.0/ });
  await row.getByRole('button', { name: 'Install sql-tuning' }).click();
  await page.getByText('Installed sql-tuning 1.2.0').waitFor();
  await row.getByText('installed').waitFor();
  const installed = async () =>
    ((await (await env!.k.request('/api/skills')).json()) as { skills: { name: string }[] }).skills.some((s) => s.name === 'sql-tuning');
  assert.ok(await installed());
  assert.deepEqual(await axeViolations(page), []);
  // Uninstalling asks in the row first (no browser dialog): the first click uninstalls nothing.
  await page.getByRole('button', { name: 'Uninstall sql-tuning', exact: true }).click();
  const question = page.getByRole('group', { name: 'Uninstall sql-tuning?' });
  await question.getByRole('button', { name: 'Keep it' }).waitFor();
  assert.ok(await installed(), 'kept until the second click');
  await question.getByRole('button', { name: 'Uninstall sql-tuning now' }).click();
  await page.getByRole('status').filter({ hasText: 'Uninstalled sql-tuning' }).waitFor();
  assert.equal(await installed(), false);
  assert.deepEqual(problems, []);
});

test('hands: the bundled hand is activated, paused and deactivated', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/hands');
  page.on('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Activate Daily Digest' }).click();
  const card = page.locator('.card', { hasText: 'Daily Digest' }).first();
  await card.getByText('Active', { exact: true }).waitFor();
  await card.getByRole('button', { name: 'Pause' }).click();
  await card.getByText('Paused', { exact: true }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'hands');
  await card.getByRole('button', { name: 'Deactivate' }).click();
  await page.getByText('No hand is active.').waitFor();
  assert.deepEqual(problems, []);
});

test('plugins: a new plugin from the scaffold is listed, then disabled', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/plugins');
  await page.getByLabel(/^A new plugin/).fill('note-taker');
  const runtime = page.getByLabel('Runtime', { exact: true });
  await runtime.locator('option').nth(1).waitFor({ state: 'attached' });
  await runtime.selectOption({ index: 1 });
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  const card = page.locator('.card', { hasText: 'note-taker' });
  await card.locator('.badge', { hasText: 'loaded' }).waitFor();
  await card.getByRole('button', { name: 'Disable' }).click();
  await card.locator('.badge', { hasText: 'disabled' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('MCP: a catalogue entry installed with its credential (never shown back) connects with its tool; uninstalled in two steps', browserTest, async () => {
  const watched = await openPage(env!, '/#/mcp');
  const { page, problems } = watched;
  refuseDialogs(watched);
  await page.getByLabel('Filter the catalogue').fill('notes');
  const card = page.locator('.card', { hasText: 'Counts notes' });
  await card.getByRole('button', { name: 'Install…' }).click();
  const token = card.getByLabel('Notes token (NOTES_TOKEN)');
  assert.equal(await token.getAttribute('type'), 'password');
  await token.fill('notes-secret-value');
  await card.getByRole('button', { name: 'Install Notes' }).click();
  await page.getByText(/Installed Notes/).waitFor();
  // It connects in the background; once it has, the view shows its state and tools.
  const connected = async () => ((await (await env!.k.request('/api/mcp/servers')).json()) as { servers: { connected: boolean }[] }).servers[0]?.connected;
  await waitFor(connected, 20_000, 'the notes server to connect');
  await page.reload();
  const row = page.getByRole('row', { name: /notes/ });
  await row.getByText('note_count').waitFor();
  await row.getByText('connected').waitFor();
  for (const p of ['/api/mcp/servers', '/api/extensions', '/api/extensions/notes'])
    assert.doesNotMatch(await (await env!.k.request(p)).text(), /notes-secret-value/, `${p} does not show the credential`);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'mcp');
  // Uninstalling asks on the card first (no browser dialog): the first click leaves the server running.
  await card.getByRole('button', { name: 'Uninstall Notes' }).click();
  await card.getByRole('group', { name: 'Uninstall Notes?' }).getByRole('button', { name: 'Keep it' }).waitFor();
  assert.equal(await connected(), true, 'kept until the second click');
  await card.getByRole('button', { name: 'Uninstall Notes and its credentials' }).click();
  await card.getByRole('status').filter({ hasText: 'Uninstalled Notes' }).waitFor();
  await page.getByText('No MCP server is configured.').waitFor();
  assert.deepEqual(problems, []);
});
