/**
 * The agent builder (modules/agents/dashboard/builder.tsx): an agent spawned from the fields with a tool and a skill;
 * fields → TOML → fields keeps a key the form does not show; an unknown tool typed in the TOML view is shown as it is
 * typed and refused at spawn; a taken name is shown on the name field; editing an agent saves its manifest back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv('', ['skills', 'templates']);
});
after(() => env?.stop());

interface Listed {
  id: string;
  name: string;
}
const agents = async () => (await (await env!.k.request('/api/agents')).json()) as Listed[];

test('the builder spawns an agent with a tool and a skill; the TOML view round-trips; an unknown tool is refused', browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/agents');
  const builder = page.getByRole('form', { name: 'Build an agent' });
  await builder.waitFor();
  await builder.getByLabel('Name', { exact: true }).fill('builder-bot');
  await builder.getByLabel('Description', { exact: true }).fill('Made with fields');
  await builder.getByLabel('Instructions (system prompt)', { exact: true }).fill('You answer in one line.');
  // The example's tools are unchecked, file_read chosen through the search.
  for (const name of ['file_write', 'file_list']) await builder.getByRole('checkbox', { name: new RegExp(`^${name} `) }).uncheck();
  await builder.getByRole('searchbox', { name: 'Search tools' }).fill('file_re');
  await builder.getByRole('checkbox', { name: /^file_read / }).check();
  await builder.getByRole('searchbox', { name: 'Search skills' }).fill('git');
  await builder.getByRole('checkbox', { name: /^git-workflow / }).check();
  await builder.getByLabel('Tokens per hour', { exact: true }).fill('50000');

  // Fields → TOML: a key the form does not show is added there, and survives the way back and forth.
  await builder.getByRole('button', { name: 'TOML' }).click();
  const editor = builder.getByLabel('Manifest (TOML)', { exact: true });
  const toml = await editor.inputValue();
  assert.match(toml, /name = "builder-bot"/);
  assert.match(toml, /skills = \[ "git-workflow" \]/);
  await editor.fill(`custom_key = "kept"\n${toml}`);
  await builder.getByRole('button', { name: 'Fields' }).click();
  assert.equal(await builder.getByLabel('Name', { exact: true }).inputValue(), 'builder-bot');
  assert.equal(await builder.getByLabel('Instructions (system prompt)', { exact: true }).inputValue(), 'You answer in one line.');
  assert.equal(await builder.getByRole('checkbox', { name: /^git-workflow / }).isChecked(), true);
  await builder.getByRole('button', { name: 'TOML' }).click();
  assert.match(await editor.inputValue(), /custom_key = "kept"/);
  await builder.getByRole('button', { name: 'Fields' }).click();

  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'builder');
  await builder.getByRole('button', { name: 'Spawn' }).click();
  await builder.getByRole('status').filter({ hasText: 'Spawned builder-bot' }).waitFor();
  const made = (await agents()).find((a) => a.name === 'builder-bot');
  assert.ok(made, 'spawned');
  const detail = (await (await env!.k.request(`/api/agents/${made.id}`)).json()) as { capabilities: { tools: string[] }; skills: string[] };
  assert.deepEqual(detail.capabilities.tools, ['file_read']);
  assert.deepEqual(detail.skills, ['git-workflow']);
  const { manifest_toml } = (await (await env!.k.request(`/api/agents/${made.id}/manifest`)).json()) as { manifest_toml: string };
  assert.match(manifest_toml, /custom_key = "kept"/);
  assert.match(manifest_toml, /max_llm_tokens_per_hour = 50000/);

  // The same name again: shown on the name field as it stands.
  await builder.getByLabel('Name', { exact: true }).fill('builder-bot');
  await page.locator('#builder-name-problem').getByText("an agent named 'builder-bot' already exists").waitFor();

  // An unknown tool typed in the TOML view: shown as it is typed, refused by the service at spawn.
  await builder.getByLabel('Name', { exact: true }).fill('second-bot');
  await builder.getByRole('button', { name: 'TOML' }).click();
  await editor.fill((await editor.inputValue()).replace(/tools = \[ "file_read" \]/, 'tools = [ "file_read", "no_such_tool" ]'));
  await builder.getByRole('list', { name: 'Problems of the manifest' }).getByText("unknown tool 'no_such_tool'").waitFor();
  await builder.getByRole('button', { name: 'Spawn' }).click();
  await builder.getByRole('alert').filter({ hasText: "invalid manifest: unknown tool 'no_such_tool'" }).waitFor();
  assert.equal((await agents()).filter((a) => a.name === 'second-bot').length, 0, 'refused: not spawned');
  // Back on the fields, the unknown name is on the tools list, marked, to uncheck.
  await builder.getByRole('button', { name: 'Fields' }).click();
  await page.locator('#builder-tools-problem').getByText("unknown tool 'no_such_tool'").waitFor();
  assert.deepEqual(await axeViolations(page), []);
  // The refused spawn is the one failed request the browser notes.
  assert.deepEqual(
    problems.filter((p) => !/status of 400 .*\/api\/agents\)$/.test(p)),
    [],
  );
  await page.context().close();
});

test('editing an agent: the builder opens on its manifest and saves it back (keys it does not show kept)', browserTest, async () => {
  const res = await env!.k.request('/api/agents', {
    method: 'POST',
    json: {
      manifest_toml: 'name = "editable"\nsession_mode = "new"\n[model]\nprovider = "default"\nmodel = "default"\n[capabilities]\ntools = ["file_read"]\n',
    },
  });
  const { agent_id } = (await res.json()) as { agent_id: string };
  const { page, problems } = await openPage(env!, `/#/agents/${agent_id}`);
  const builder = page.getByRole('form', { name: 'Edit the agent' });
  await builder.waitFor();
  assert.equal(await builder.getByLabel('Name', { exact: true }).inputValue(), 'editable');
  await builder.getByLabel('Description', { exact: true }).fill('Edited in the builder');
  await builder.getByRole('searchbox', { name: 'Search tools' }).fill('file_list');
  await builder.getByRole('checkbox', { name: /^file_list / }).check();
  await builder.getByRole('button', { name: 'Save' }).click();
  await builder.getByRole('status').filter({ hasText: 'Saved editable' }).waitFor();
  await waitFor(
    async () => {
      const d = (await (await env!.k.request(`/api/agents/${agent_id}`)).json()) as { description: string; capabilities: { tools: string[] } };
      return d.description === 'Edited in the builder' && d.capabilities.tools.join() === 'file_read,file_list';
    },
    5000,
    'the saved settings',
  );
  const { manifest_toml } = (await (await env!.k.request(`/api/agents/${agent_id}/manifest`)).json()) as { manifest_toml: string };
  assert.match(manifest_toml, /session_mode = "new"/);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.context().close();
});
