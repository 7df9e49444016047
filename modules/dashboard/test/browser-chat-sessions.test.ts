/**
 * The chat as people know it: regenerate, edit and branch, rename, delete and export a session, a stopped reply
 * that survives a reload, the wait for the model, tables with borders and code with a copy button.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, spawn, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv();
});
after(() => env?.stop());

let agents = 0;
const chatter = () => `name = "chatter-${++agents}"\n`;
type Sent = { messages: Array<{ role: string; content: unknown }> };
const said = (i: number) =>
  (env!.fake.requests[i].body as Sent).messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${JSON.stringify(m.content)}`);

test('regenerate and edit-and-branch: the reply is asked again, an edited message re-runs in a new branch, the old one kept', browserTest, async () => {
  const id = await spawn(env!.k, chatter());
  env!.fake.enqueue({ text: 'A dull answer.' });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('Name a bird');
  await box.press('Enter');
  await page.getByText('A dull answer.').waitFor();

  env!.fake.enqueue({ text: 'A pelican!', chunkSize: 2, chunkDelayMs: 60, delayMs: 1500 });
  let before = env!.fake.requests.length;
  await page.getByRole('button', { name: 'Regenerate' }).click();
  // While the provider has not answered (for 1.5 s, time enough for a busy machine to look), the reply says it waits.
  await page.getByRole('status').getByText('Waiting for the model…').waitFor();
  await page.getByText('A pelican!').waitFor();
  assert.equal(await page.getByText('A dull answer.').count(), 0, 'the regenerated reply replaces the old one on screen');
  assert.deepEqual(said(before), ['user: "Name a bird"'], 'the old reply is not sent again');

  env!.fake.enqueue({ text: 'A penguin, then.' });
  before = env!.fake.requests.length;
  const user = page.locator('.message.user', { hasText: 'Name a bird' });
  await user.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Edit your message').fill('Name a bird that swims');
  await page.getByRole('button', { name: 'Save and re-run' }).click();
  await page.getByText('A penguin, then.').waitFor();
  assert.deepEqual(said(before), ['user: "Name a bird that swims"']);
  // Three sessions now: the first, the regenerated branch and the edited one; the first still holds its answer.
  const sessions = page.getByRole('complementary', { name: 'Sessions' });
  await waitFor(async () => (await sessions.locator('.session-list li').count()) === 3);
  // The list may show the new session before its title (a second read); the title follows.
  await sessions.getByRole('button', { name: 'Branch: Name a bird that swims' }).waitFor({ timeout: 10_000 });
  assert.equal(await sessions.getByRole('button', { name: 'Branch: Name a bird that swims' }).count(), 1);
  await sessions.locator('.session-list li').last().locator('button.session-title').click();
  await page.getByText('A dull answer.').waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('rename, export (Markdown and JSON downloads) and delete a session, with no browser dialog', browserTest, async () => {
  const id = await spawn(env!.k, chatter());
  env!.fake.enqueue({ text: '| bird | swims |\n|---|---|\n| penguin | yes |\n\n```sh\necho hi\n```' });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  page.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('Birds that swim\nas a table');
  await box.press('Enter');
  // A table with borders, code with a copy button.
  const cell = page.locator('.markdown td', { hasText: 'penguin' });
  await cell.waitFor();
  assert.notEqual(await cell.evaluate((td) => getComputedStyle(td).borderTopStyle), 'none');
  await page.getByRole('button', { name: 'Copy code' }).waitFor();

  const sessions = page.getByRole('complementary', { name: 'Sessions' });
  // The title is the first line of the first message.
  await sessions.getByRole('button', { name: 'Birds that swim', exact: true }).waitFor();
  await sessions.getByRole('button', { name: 'Rename Birds that swim' }).click();
  await sessions.getByLabel('New name for Birds that swim').fill('Swimmers');
  await sessions.getByRole('button', { name: 'Save' }).click();
  await sessions.getByRole('button', { name: 'Swimmers', exact: true }).waitFor();

  const md = page.waitForEvent('download');
  await sessions.getByRole('button', { name: 'Export Swimmers as Markdown' }).click();
  const mdFile = await md;
  assert.match(mdFile.suggestedFilename(), /^session-[0-9a-f]{8}\.md$/);
  const text = await streamText(await mdFile.createReadStream());
  assert.match(text, /^# Swimmers\n/);
  assert.match(text, /\| penguin \| yes \|/);
  const js = page.waitForEvent('download');
  await sessions.getByRole('button', { name: 'Export Swimmers as JSON' }).click();
  const jsFile = await js;
  assert.match(jsFile.suggestedFilename(), /\.json$/);
  assert.equal((JSON.parse(await streamText(await jsFile.createReadStream())) as { label: string }).label, 'Swimmers');

  await sessions.getByRole('button', { name: 'Delete Swimmers' }).click();
  await sessions.getByRole('group', { name: 'Delete Swimmers?' }).getByRole('button', { name: 'Delete' }).click();
  await sessions.getByRole('button', { name: 'Swimmers', exact: true }).waitFor({ state: 'detached' });
  await page.locator('.message').first().waitFor({ state: 'detached' });
  const left = (await (await env!.k.request(`/api/agents/${id}/sessions`)).json()) as { items: Array<{ label: string | null }> };
  assert.deepEqual(
    left.items.map((i) => i.label),
    [null],
    'a fresh session replaced the deleted current one',
  );
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('search as you type across sessions', browserTest, async () => {
  const id = await spawn(env!.k, chatter());
  for (const message of ['about herons', 'about owls']) {
    env!.fake.enqueue({ text: 'noted' });
    await env!.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message } });
    await env!.k.request(`/api/agents/${id}/session/reset`, { method: 'POST' });
  }
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  const sessions = page.getByRole('complementary', { name: 'Sessions' });
  await sessions.getByRole('button', { name: 'about owls', exact: true }).waitFor();
  await sessions.getByLabel('Search sessions').pressSequentially('hero');
  await sessions.getByRole('button', { name: 'about owls', exact: true }).waitFor({ state: 'detached' });
  // The list is empty while the search's answer loads: wait for it before counting.
  await sessions.getByRole('button', { name: 'about herons', exact: true }).waitFor();
  assert.equal(await sessions.getByRole('button', { name: 'about herons', exact: true }).count(), 1);
  assert.deepEqual(problems, []);
});

test('stop, then reload: the stopped reply keeps its partial text and its mark; the next message is a turn of its own', browserTest, async () => {
  const id = await spawn(env!.k, chatter());
  // Long enough (about 9 s) that a busy CI machine still finds the reply streaming when it clicks Stop.
  const counting = 'Counting: ' + 'one two three four five six seven eight nine '.repeat(4) + 'ten';
  env!.fake.enqueue({ text: counting, chunkSize: 4, chunkDelayMs: 200 });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('Count to ten');
  await box.press('Enter');
  await page.getByText('Counting', { exact: false }).waitFor();
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByTestId('stopped').waitFor();
  await page.reload();
  await page.getByTestId('stopped').waitFor();
  const reply = (await page.locator('.message.assistant').last().locator('.markdown').textContent()) ?? '';
  assert.ok(reply.startsWith('Counting') && !reply.includes('ten'), `partial: ${reply}`);

  env!.fake.enqueue({ text: 'Fine.' });
  const before = env!.fake.requests.length;
  await box.fill('Stop counting');
  await box.press('Enter');
  await page.getByText('Fine.').waitFor();
  assert.deepEqual(
    said(before).map((l) => l.split(':')[0]),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
