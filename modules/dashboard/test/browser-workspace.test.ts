/** An agent's checkpoints (changes, diff, restore) and its workspace files (folders, a text file, a binary download). */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { axeViolations, browserTest, openPage, screenshot, spawn, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv('', ['checkpoints']);
});
after(() => env?.stop());

/** Markup in a file: it must reach the page as text. */
const PAYLOAD = '<img src=x onerror="window.__xss=1">';

async function turn(agentId: string, input: Record<string, unknown>): Promise<void> {
  env!.fake.enqueue({ toolCalls: [{ name: 'file_write', input }] }, { text: 'written' });
  const res = await env!.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'write it' } });
  assert.equal(res.status, 200, await res.clone().text());
}

test("an agent's checkpoint: its changes and diff as text, restored after a confirm step", browserTest, async () => {
  const agentId = await spawn(env!.k, 'name = "scribe"\n[capabilities]\ntools = ["file_write"]\n');
  const file = path.join(env!.k.home, 'workspaces', agentId, 'plan.md');
  await turn(agentId, { path: 'plan.md', content: 'one\ntwo\n' });
  await turn(agentId, { path: 'plan.md', content: `one\nTWO ${PAYLOAD}\n` });
  await turn(agentId, { path: 'plan.md', content: 'three\n' });
  assert.equal(readFileSync(file, 'utf8'), 'three\n');

  const { page, problems } = await openPage(env!, `/#/checkpoints/${agentId}`);
  await page.getByRole('heading', { name: 'Snapshots' }).waitFor();
  const shows = page.getByRole('button', { name: /^Show checkpoint/ });
  await shows.first().waitFor();
  assert.equal(await shows.count(), 2);
  // The newest: taken before the third write, so it holds the second one's text.
  await shows.first().click();
  await page.getByRole('heading', { name: 'Changed since the checkpoint before' }).waitFor();
  assert.match(
    (await page
      .getByRole('row', { name: /plan\.md/ })
      .last()
      .textContent()) ?? '',
    /changed\s*\+1 −1/,
  );
  const added = page.locator('.diff .diff-add', { hasText: 'TWO' });
  assert.equal((await added.textContent())?.trim(), `+TWO ${PAYLOAD}`);
  assert.equal(await page.locator('.diff .diff-del').last().textContent(), '-two\n');
  assert.equal(await page.locator('.diff img').count(), 0, 'the diff is text, not markup');
  assert.equal(await page.evaluate('window.__xss'), undefined);

  await page.getByRole('button', { name: 'Restore this checkpoint…' }).click();
  const confirm = page.getByRole('group', { name: 'Confirm the restore' });
  await confirm.getByText('overwrites 1 file').waitFor();
  assert.equal(readFileSync(file, 'utf8'), 'three\n', 'nothing happens before the confirmation');
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'checkpoints');
  await confirm.getByRole('button', { name: 'Restore these files' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /Restored 1 file from/ })
    .waitFor();
  assert.equal(readFileSync(file, 'utf8'), `one\nTWO ${PAYLOAD}\n`);
  assert.deepEqual(problems, []);
});

test("an agent's workspace: folders, a text file shown as text, a binary file downloaded", browserTest, async () => {
  const agentId = await spawn(env!.k, 'name = "keeper"\n');
  const root = path.join(env!.k.home, 'workspaces', agentId);
  mkdirSync(path.join(root, 'notes', 'deep'), { recursive: true });
  writeFileSync(path.join(root, 'notes', 'plan.md'), `# Plan\n${PAYLOAD}\n`);
  writeFileSync(path.join(root, 'notes', 'deep', 'x.txt'), 'x');
  const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 255]);
  writeFileSync(path.join(root, 'logo.png'), binary);

  const { page, problems } = await openPage(env!, `/#/files/${agentId}`);
  await page.getByRole('link', { name: 'notes/' }).click();
  await page.getByRole('link', { name: 'deep/' }).waitFor();
  await page.getByRole('link', { name: 'plan.md' }).click();
  const text = page.getByLabel('Contents of notes/plan.md');
  await text.waitFor();
  assert.equal(await text.textContent(), `# Plan\n${PAYLOAD}\n`);
  assert.equal(await page.locator('.file-text img').count(), 0);
  assert.equal(await page.evaluate('window.__xss'), undefined);
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'files');

  // Back to the workspace root by the folder path, then the binary file: offered as a download, not shown.
  await page.getByRole('navigation', { name: 'Folder' }).getByRole('link', { name: 'workspace' }).click();
  await page.getByRole('link', { name: 'logo.png' }).click();
  await page.getByText('This is not a text file').waitFor();
  const [saved] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
  assert.equal(saved.suggestedFilename(), 'logo.png');
  assert.deepEqual(readFileSync((await saved.path())!), binary);
  assert.deepEqual(problems, []);
});
