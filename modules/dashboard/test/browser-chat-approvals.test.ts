/**
 * Approvals in the conversation: a held call waits in its chat step with Approve / Reject; approving runs it, its
 * result appears in the step and the reply streams on; rejecting tells the model; the navigation counts what waits.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, spawn, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv('[approval]\nrequire_approval = ["file_write"]\ntimeout_secs = 120\n', ['approvals', 'secrets']);
});
after(() => env?.stop());

const manifest = (name: string) => `name = "${name}"\n[capabilities]\ntools = ["file_write", "file_read"]\n`;

test('a held call waits in its step; approving runs it, the result shows in the step and the reply streams on; the badge counts', browserTest, async () => {
  const id = await spawn(env!.k, manifest('keeper'));
  env!.fake.enqueue(
    { toolCalls: [{ id: 'call_ok', name: 'file_write', input: { path: 'kept.txt', content: 'approved text' } }] },
    { text: 'It waits for your approval.' },
  );
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('Keep a note');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  const step = page.locator('details.step', { hasText: 'file_write' });
  await step.getByText('waiting for approval').waitFor();
  assert.equal(await step.getByText('failed').count(), 0, 'a held call is not shown as failed');
  await page.getByTestId('badge-Approvals').filter({ hasText: '1' }).waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'chat-approval');

  // After a reload the step still waits, with its buttons (read from the pending requests).
  await page.reload();
  await step.getByText('waiting for approval').waitFor();

  env!.fake.enqueue({ text: 'Done: **kept.txt** is written.', chunkSize: 4, chunkDelayMs: 30 });
  await step.getByRole('button', { name: 'Approve' }).click();
  await step.getByText('— approved').waitFor();
  await step.locator('summary').click();
  await step.getByText(/A human approved your file_write call; it ran/).waitFor();
  await page.getByText('Done: kept.txt is written.').waitFor();
  const file = path.join(env!.k.home, 'workspaces', id, 'kept.txt');
  await waitFor(() => existsSync(file), 3000, 'the approved write');
  assert.equal(readFileSync(file, 'utf8'), 'approved text');
  await waitFor(async () => (await page.getByTestId('badge-Approvals').count()) === 0, 5000, 'the badge gone with the last pending request');

  // Reloaded, the outcome is in the same step: no message from the user carries it.
  await page.reload();
  await step.getByText('— approved').waitFor();
  const userTexts = await page.locator('li.message.user').allTextContents();
  assert.deepEqual(
    userTexts.filter((t) => /approved/i.test(t)),
    [],
    'the result is never shown as a message from the user',
  );
  assert.equal(await page.locator('details.step', { hasText: 'file_write' }).count(), 1, 'one step for the call, updated in place');
  assert.deepEqual(problems, []);
});

test('rejecting in the step ends the call: the model is told, the step says rejected', browserTest, async () => {
  const id = await spawn(env!.k, manifest('refused'));
  // The reply after the held call is slow: the decision is made while the turn that held it is still running.
  env!.fake.enqueue({ toolCalls: [{ id: 'call_no', name: 'file_write', input: { path: 'no.txt', content: 'x' } }] }, { text: 'Waiting.', delayMs: 1500 });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('Write no.txt');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  const step = page.locator('details.step', { hasText: 'file_write' });
  await step.getByRole('button', { name: 'Reject' }).waitFor();
  env!.fake.enqueue({ text: 'Understood, I will not write it.' });
  await step.getByRole('button', { name: 'Reject' }).click();
  await step.getByText('— rejected').waitFor();
  await page.getByText('Understood, I will not write it.').waitFor();
  // The session read back after the turn says only that the call did not run: the step keeps the decision it saw.
  await step.getByText('— rejected').waitFor();
  assert.equal(existsSync(path.join(env!.k.home, 'workspaces', id, 'no.txt')), false);
  const told = env!.fake.requests.map((r) => JSON.stringify(r.body)).join('\n');
  assert.match(told, /A human rejected your file_write call: it was not run/);
  assert.deepEqual(problems, []);
});
