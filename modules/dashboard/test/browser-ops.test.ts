/** The views of the operations modules: templates, approvals with TOTP, schedules, audit trail, backups. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'otplib';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, refuseDialogs, screenshot, spawn, startEnv, wholeAgentListReads, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip)
    env = await startEnv('[approval]\nsecond_factor = "totp"\n', [
      'templates',
      'approvals',
      'scheduler',
      'tasks',
      'audit',
      'backup',
      'workflows',
      'triggers',
      'skills',
      'prompt-guard',
      'mcp',
    ]);
});
after(() => env?.stop());

test("an agent is spawned from a template (GET /api/templates), edited in the builder's TOML view first", browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/agents');
  await page.getByLabel('From a template').selectOption('coder');
  await page.getByText('Template coder loaded into the builder').waitFor();
  await page.getByRole('button', { name: 'TOML', exact: true }).click();
  const editor = page.getByLabel('Manifest (TOML)');
  assert.match(await editor.inputValue(), /^name = "coder"/);
  await editor.fill((await editor.inputValue()).replace('name = "coder"', 'name = "my-coder"'));
  await page.getByRole('button', { name: 'Spawn', exact: true }).click();
  await page.getByText('Spawned my-coder').waitFor();
  const agents = (await (await env!.k.request('/api/agents')).json()) as { name: string }[];
  assert.ok(agents.some((a) => a.name === 'my-coder'));
  assert.deepEqual(problems, []);
});

test('a pending approval is approved with a TOTP code; without one it is refused, in words', browserTest, async () => {
  const setup = (await (await env!.k.request('/api/approvals/totp/setup', { method: 'POST', json: {} })).json()) as { secret: string };
  // The authenticator's codes: one confirms the enrollment, the next step's approves (a used step is refused).
  const code = (steps: number) => generate({ secret: setup.secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });
  const confirm = await env!.k.request('/api/approvals/totp/confirm', { method: 'POST', json: { code: await code(0) } });
  assert.equal(confirm.status, 200);
  const agent = await spawn(env!.k, 'name = "asker"\n');
  const created = await env!.k.request('/api/approvals', {
    method: 'POST',
    json: { agent_id: agent, action: 'shell_exec', description: 'wants to run the deploy script', payload: { command: './deploy.sh' } },
  });
  const body = (await created.json()) as { id: string };
  assert.equal(created.status, 201, JSON.stringify(body));
  const { id } = body;

  const { page, problems } = await openPage(env!, '/#/approvals');
  await page.getByText('wants to run the deploy script').waitFor();
  // No device is paired here: the card says nobody was notified.
  await page.getByText('No paired device was reached').first().waitFor();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.locator('.card .error').first().waitFor();
  assert.match((await page.locator('.card .error').first().textContent()) ?? '', /code/i);
  await page.getByLabel('Authenticator code').fill(await code(1));
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByText('Approved').first().waitFor();
  const after = (await (await env!.k.request(`/api/approvals/${id}`)).json()) as { status: string };
  assert.equal(after.status, 'approved');
  // A request made while the inbox is open appears without a reload (the approvals SSE stream).
  const live = await env!.k.request('/api/approvals', {
    method: 'POST',
    json: { agent_id: agent, action: 'file_delete', description: 'wants to clean the build folder', payload: { path: 'build' } },
  });
  assert.equal(live.status, 201);
  await page.getByText('wants to clean the build folder').waitFor({ timeout: 5000 });
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'approvals');
  assert.deepEqual(
    problems.filter((p) => !/status of 4\d\d/.test(p)),
    [],
  );
});

test('a schedule is created in the form (its agent found by part of its name), its next run shown, deleted in two steps', browserTest, async () => {
  await spawn(env!.k, 'name = "reporter"\n');
  await spawn(env!.k, 'name = "importer"\n');
  const watched = await openPage(env!, '/#/schedules');
  const { page, problems, reads } = watched;
  refuseDialogs(watched);
  await page.getByLabel('Name', { exact: true }).fill('morning report');
  // The agent chooser asks the service for agents matching what is typed ("port" is in both names; "repo" in one).
  const picker = page.getByRole('combobox', { name: 'Agent' });
  await picker.fill('port');
  const options = page.getByRole('listbox', { name: 'Agents' }).getByRole('option');
  await options.filter({ hasText: 'importer' }).waitFor();
  await picker.fill('repo');
  await waitFor(async () => /^reporter \(\w+\)$/.test((await options.allTextContents()).join('|')), 5000, 'reporter alone listed');
  await picker.press('ArrowDown');
  await picker.press('Enter');
  assert.equal(await picker.inputValue(), 'reporter');
  await page.getByLabel('When').fill('30 7 * * *');
  await page.getByLabel('Message to the agent').fill('Write the morning report');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  await page.getByText(/Created morning report; next run/).waitFor();
  const row = page.getByRole('row', { name: /morning report/ });
  await row.getByText('reporter: “Write the morning report”').waitFor();
  const jobs = (await (await env!.k.request('/api/schedules')).json()) as { items: { name: string; next_run: string }[] };
  const job = jobs.items.find((j) => j.name === 'morning report')!;
  const next = new Date(job.next_run);
  assert.equal(next.getUTCHours(), 7);
  assert.equal(next.getUTCMinutes(), 30);
  // Shown in local time, as the browser (on this machine) has it: YYYY-MM-DD HH:MM:SS.
  const two = (n: number) => String(n).padStart(2, '0');
  const local = `${next.getFullYear()}-${two(next.getMonth() + 1)}-${two(next.getDate())} ${two(next.getHours())}:${two(next.getMinutes())}:${two(next.getSeconds())}`;
  assert.equal(await row.getByTestId('next-run').textContent(), local);
  // A wrong expression is refused with the service's words.
  await page.getByLabel('When').fill('not a cron');
  await page.getByRole('button', { name: 'Create schedule' }).click();
  // In the service's words, with the request id to quote.
  await page.getByText(/invalid cron expression 'not a cron'.*\(request [\w-]+\)/).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'schedules');
  // Deleting asks in the row first (no browser dialog): the first click deletes nothing.
  await row.getByRole('button', { name: 'Delete morning report' }).click();
  const question = row.getByRole('group', { name: 'Delete morning report?' });
  await question.getByRole('button', { name: 'Keep it' }).click();
  await question.waitFor({ state: 'detached' });
  await row.getByRole('button', { name: 'Delete morning report' }).click();
  const names = async () => ((await (await env!.k.request('/api/schedules')).json()) as { items: { name: string }[] }).items.map((j) => j.name);
  assert.ok((await names()).includes('morning report'), 'kept until the second click');
  await question.getByRole('button', { name: 'Delete morning report now' }).click();
  await page.getByRole('status').filter({ hasText: 'Deleted morning report' }).waitFor();
  assert.ok(!(await names()).includes('morning report'));
  assert.ok(reads.some((u) => u.pathname === '/api/agents' && u.searchParams.get('q') === 'repo'));
  assert.deepEqual(wholeAgentListReads(reads), [], 'the view never reads the whole agent list');
  assert.deepEqual(
    problems.filter((p) => !/status of 400/.test(p)),
    [],
  );
});

test('the audit trail lists entries and verifies the chain; a backup is created, listed and downloaded', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/audit');
  await page.getByRole('cell', { name: 'module_loaded' }).first().waitFor();
  await page.getByRole('button', { name: 'Verify the chain' }).click();
  await page.getByText(/Chain valid: \d+ entries checked/).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await page.evaluate(() => (location.hash = '#/backups'));
  await page.getByRole('button', { name: 'Create a backup' }).click();
  await page.getByText(/Created talon-backup-/).waitFor();
  const row = page.getByRole('row', { name: /talon-backup-.*\.tar\.gz/ });
  await row.waitFor();
  const filename = (await row.getByRole('rowheader').textContent())!;
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: `Download ${filename}` }).click()]);
  assert.equal(download.suggestedFilename(), filename);
  assert.deepEqual(readFileSync((await download.path())!), readFileSync(path.join(env!.k.home, 'backups', filename)));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'backups');
  assert.deepEqual(problems, []);
});

test('the task board posts a task into Pending and cancels it', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/tasks');
  await page.getByLabel('New task').fill('Write the release notes');
  await page.getByRole('button', { name: 'Post' }).click();
  const pending = page.getByRole('region', { name: 'Pending' });
  await pending.getByText('Write the release notes').waitFor();
  await pending.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('region', { name: 'Cancelled' }).getByText('Write the release notes').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('a trigger is created, paused and deleted; workflows, skills and MCP servers list what the service has', browserTest, async () => {
  await spawn(env!.k, 'name = "watcher"\n');
  const workflow = await env!.k.request('/api/workflows', {
    method: 'POST',
    json: { name: 'summarise', description: 'one step', steps: [{ name: 'sum', agent_name: 'watcher', prompt: 'Summarise {{input}}' }] },
  });
  assert.equal(workflow.status, 201, await workflow.text());
  const { page, problems, reads } = await openPage(env!, '/#/triggers');
  await page.getByRole('combobox', { name: 'Agent' }).fill('watch');
  await page.getByRole('option', { name: /watcher/ }).click();
  await page.getByRole('button', { name: 'Create trigger' }).click();
  await page.getByText('Trigger created').waitFor();
  const row = page.getByRole('row', { name: /watcher/ });
  await row.getByRole('button', { name: 'Pause' }).click();
  await row.getByText('paused').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await row.getByRole('button', { name: 'Delete' }).click();
  await row.waitFor({ state: 'detached' });
  await page.evaluate(() => (location.hash = '#/workflows'));
  await page
    .getByRole('row', { name: /summarise/ })
    .getByText('1', { exact: true })
    .waitFor();
  await page.getByRole('link', { name: 'summarise' }).click();
  await page.getByText('Summarise {{input}}', { exact: false }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await page.evaluate(() => (location.hash = '#/skills'));
  await page.getByRole('row', { name: /code-review/ }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await page.evaluate(() => (location.hash = '#/mcp'));
  await page.getByText('No MCP server is configured.').waitFor();
  assert.deepEqual(wholeAgentListReads(reads), []);
  assert.deepEqual(problems, []);
});
