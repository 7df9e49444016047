import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@talon/testing';
import { axeViolations, browserTest, openPage, screenshot, spawn, startEnv, type Env } from './helpers.ts';

let env: Env | undefined;
before(async () => {
  if (!browserTest.skip) env = await startEnv();
});
after(() => env?.stop());

let agents = 0;
/** A manifest with the two file tools, under a new name each time (names are unique). */
const writer = () => `name = "writer-${++agents}"\n[capabilities]\ntools = ["file_write", "file_read"]\n`;

test("with no key on loopback the app goes straight in; an agent is spawned from the builder's TOML view, errors inline", browserTest, async () => {
  const { page, problems } = await openPage(env!, '/#/agents');
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  assert.equal(await page.getByLabel('API key').count(), 0, 'no sign-in screen');
  await page.getByRole('button', { name: 'TOML', exact: true }).click();
  const editor = page.getByLabel('Manifest (TOML)');
  // A syntax error is shown as it is typed, with its place, and nothing can be sent.
  await editor.fill('name = "half\n');
  await page.getByText(/^Line 1, column \d+: /).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Spawn', exact: true }).isDisabled(), true);
  await editor.fill('name = 3\n');
  await page.getByRole('button', { name: 'Spawn', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: "invalid manifest: 'name' must be a non-empty string" }).waitFor();
  assert.equal(await editor.getAttribute('aria-invalid'), 'true');
  await editor.fill('name = "from-the-editor"\ndescription = "spawned in a browser"\n');
  await page.getByRole('button', { name: 'Spawn', exact: true }).click();
  await page.getByText('Spawned from-the-editor').waitFor();
  await page.getByRole('link', { name: 'from-the-editor' }).waitFor();
  const agents = (await (await env!.k.request('/api/agents')).json()) as { name: string }[];
  assert.ok(agents.some((a) => a.name === 'from-the-editor'));
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'agents');
  // The manifest error was a 400 the browser reports as a failed resource; nothing else went wrong.
  assert.deepEqual(
    problems.filter((p) => !/status of 400/.test(p)),
    [],
  );
});

test('chat: the reply streams, a tool call shows as a step with its input and result, usage of the turn', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue(
    { toolCalls: [{ name: 'file_write', input: { path: 'notes.txt', content: 'hello from the test' } }] },
    { text: 'I wrote **notes.txt** for you.\n\n```ts\nconst x: number = 1;\n```', chunkSize: 3, chunkDelayMs: 120 },
  );
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('Write a note');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  // Token by token: part of the text is on screen while the turn still runs (the Stop button is there; the reply
  // streams for about 3 s, time enough for a busy machine to look).
  await page.getByText('I wrote', { exact: false }).waitFor();
  assert.ok(await page.getByRole('button', { name: 'Stop' }).isVisible(), 'still streaming');
  await page.getByTestId('turn-usage').waitFor();
  assert.match((await page.getByTestId('turn-usage').textContent()) ?? '', /, 2 model calls\b/);
  const step = page.locator('details.step', { hasText: 'file_write' });
  await step.locator('summary').click();
  await step.getByText('"path": "notes.txt"').waitFor();
  await step.getByText(/Successfully wrote/).waitFor();
  // Markdown once the renderer has loaded (when the page is idle), code highlighted once the highlighter has.
  await page.locator('.markdown strong', { hasText: 'notes.txt' }).waitFor();
  await page.locator('.markdown code.hljs.language-ts span').first().waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'chat');
  assert.deepEqual(problems, []);
});

/** Hands the composer a file the way a person's drop or paste does: an event carrying a DataTransfer. */
function dropOrPaste(kind: 'drop' | 'paste', name: string, text: string): string {
  const file = `const dt = new DataTransfer(); dt.items.add(new File([${JSON.stringify(text)}], ${JSON.stringify(name)}, { type: 'text/plain' }));`;
  return kind === 'drop'
    ? `${file} document.querySelector('form.composer').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));`
    : `${file} document.querySelector('#message').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));`;
}

test('attachments by the picker, drag-and-drop and paste are uploaded and sent with the message; Shift+Enter is a new line', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'Got your files.' });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  const chips = page.getByRole('list', { name: 'Attachments to send' });
  await page.locator('#attach').setInputFiles({ name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\nship the dashboard') });
  await chips.getByText('plan.md').waitFor();
  await page.evaluate(dropOrPaste('drop', 'dropped.txt', 'the dropped words'));
  await chips.getByText('dropped.txt').waitFor();
  await page.evaluate(dropOrPaste('paste', 'pasted.txt', 'the pasted words'));
  await chips.getByText('pasted.txt').waitFor();
  const before = env!.fake.requests.length;
  const box = page.getByLabel('Message', { exact: true });
  await box.fill('Read these');
  await box.press('Shift+Enter');
  await box.pressSequentially('all three');
  assert.equal(await box.inputValue(), 'Read these\nall three', 'Shift+Enter adds a line, sends nothing');
  assert.equal(env!.fake.requests.length, before);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Got your files.').waitFor();
  const sent = JSON.stringify(env!.fake.requests.slice(before).map((r) => r.body));
  for (const expected of [/\[Attached file: plan\.md\]/, /ship the dashboard/, /the dropped words/, /the pasted words/]) assert.match(sent, expected);
  await page.getByText('Attached: plan.md, dropped.txt, pasted.txt').waitFor();
  assert.deepEqual(problems, []);
});

test('Stop ends a slow reply: the provider request is cancelled and the turn ends with the text so far', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'This is a very slow answer that goes on and on. '.repeat(20), chunkSize: 2, chunkDelayMs: 100 });
  const before = env!.fake.requests.length;
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('Take your time');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('This is', { exact: false }).waitFor();
  await page.getByLabel('Message', { exact: true }).press('Escape');
  await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  await waitFor(() => env!.fake.requests.slice(before).some((r) => r.aborted), 5000, 'the provider request to be cancelled');
  const text = (await page.locator('.message.assistant').last().textContent()) ?? '';
  assert.ok(text.length < 'This is a very slow answer that goes on and on. '.repeat(20).length, 'stopped before the end');
  assert.deepEqual(problems, []);
});

test('Interrupt ends the turn at its next tool call: the call is not run and the model is not called again', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({
    text: 'I will write it down now. '.repeat(8),
    chunkSize: 3,
    chunkDelayMs: 60,
    toolCalls: [{ name: 'file_write', input: { path: 'interrupted.txt', content: 'never' } }],
  });
  const before = env!.fake.requests.length;
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('Write it down');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('I will write', { exact: false }).waitFor();
  await page.getByRole('button', { name: 'Interrupt' }).click();
  await page.getByRole('button', { name: 'Interrupt' }).waitFor({ state: 'detached' });
  await page.locator('details.step', { hasText: 'file_write' }).getByText('failed').waitFor();
  assert.equal(env!.fake.requests.length, before + 1, 'no second model call');
  const files = (await (await env!.k.request(`/api/agents/${id}/files`)).json()) as { files: { name: string }[] };
  assert.ok(!files.files.some((f) => f.name === 'interrupted.txt'), 'the tool did not run');
  assert.deepEqual(problems, []);
});

test('an XSS payload in a reply and in a tool result is inert', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  const payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><a href="javascript:window.__xss=3">click</a>';
  env!.fake.enqueue({ toolCalls: [{ name: 'file_read', input: { path: '<img src=x onerror="window.__xss=4">' } }] }, { text: `Here: ${payload}` });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill(payload);
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('Here:').waitFor();
  await page.getByTestId('turn-usage').waitFor();
  await page.locator('details.step summary').first().click();
  await page.locator('.markdown a', { hasText: 'click' }).click();
  // A pause that proves an absence: nothing the payload carries runs after the click.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  assert.equal(await page.locator('[onerror]').count(), 0);
  assert.equal(await page.locator('#main script').count(), 0);
  assert.equal(await page.locator('a[href^="javascript:"]').count(), 0);
  // What the browser may report: the sanitised img's failed load (src=x), and Chromium's CSP refusing the handler
  // while DOMPurify parses the payload in its inert document (a known report of Chromium's, cure53/DOMPurify#107).
  // Nothing else; above, nothing ran.
  assert.deepEqual(
    problems.filter((p) => !/Failed to load resource|Executing inline event handler violates the following Content Security Policy/.test(p)),
    [],
  );
});

test('the usage chart renders after a turn', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'counted', usage: { input: 120, output: 30 } });
  assert.equal((await env!.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'count me' } })).status, 200);
  const { page, problems } = await openPage(env!, '/#/usage');
  await page.getByRole('heading', { name: 'Usage & budgets' }).waitFor();
  // By day (tokens, cost) and by model (bars): each drawn once its own request answers.
  for (const name of ['Tokens by day', 'Cost by day (USD)', 'Tokens by model']) {
    await page.getByRole('figure', { name }).locator('.uplot canvas').waitFor();
  }
  assert.equal(await page.locator('.chart').count(), 3);
  await page
    .locator('table.table')
    .getByRole('row', { name: /fake-model/ })
    .waitFor();
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, 'usage');
  assert.deepEqual(problems, []);
});

test('owner notices are shown apart from the conversation', browserTest, async () => {
  const id = await spawn(env!.k, `name = "notifier-${++agents}"\n[capabilities]\ntools = ["notify_owner"]\n`);
  env!.fake.enqueue({ toolCalls: [{ name: 'notify_owner', input: { reason: 'disk', summary: 'the disk is nearly full' } }] }, { text: 'I told the owner.' });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('check the disk');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  const notices = page.getByRole('complementary', { name: 'Owner notices' });
  await notices.getByText('the disk is nearly full', { exact: false }).waitFor();
  assert.equal(await page.locator('.messages .markdown', { hasText: 'nearly full' }).count(), 0, 'not in the chat (only in the tool step that sent it)');
  assert.deepEqual(problems, []);
});

test('sessions: a new one becomes current, renaming names it, search finds it, switching goes back', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'first answer' });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('remember the pelican');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('first answer').waitFor();
  const sessions = page.getByRole('complementary', { name: 'Sessions' });
  await sessions.getByRole('button', { name: 'New session' }).click();
  await page.getByText('first answer').waitFor({ state: 'detached' });
  await sessions.locator('.session-list li').nth(1).waitFor();
  await sessions
    .locator('li', { hasText: '2 messages' })
    .getByRole('button', { name: /^Rename/ })
    .click();
  await sessions.getByLabel(/^New name for/).fill('pelican talk');
  await sessions.getByLabel(/^New name for/).press('Enter');
  await sessions.getByRole('button', { name: 'pelican talk', exact: true }).waitFor();
  await sessions.getByLabel('Search sessions').fill('pelican');
  await sessions.getByLabel('Search sessions').press('Enter');
  await sessions.locator('.session-list li').first().waitFor();
  assert.equal(await sessions.locator('.session-list li').count(), 1, 'only the session that mentions it');
  // A read of the whole list that answers after a later search: the late answer must not replace the search's.
  const wholeList = (url: URL) => url.pathname === `/api/agents/${id}/sessions`;
  await page.route(wholeList, async (route) => {
    await new Promise((done) => setTimeout(done, 1500));
    await route.continue();
  });
  const lateAnswer = page.waitForResponse((res) => wholeList(new URL(res.url())), { timeout: 10_000 });
  await sessions.getByLabel('Search sessions').fill('');
  await sessions.getByLabel('Search sessions').press('Enter');
  await sessions.getByLabel('Search sessions').fill('pelican');
  await sessions.getByLabel('Search sessions').press('Enter');
  await sessions.getByRole('button', { name: 'pelican talk', exact: true }).waitFor();
  await lateAnswer;
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 300))));
  assert.equal(await sessions.locator('.session-list li').count(), 1, 'still only the session that mentions it');
  await page.unroute(wholeList);
  await sessions.getByRole('button', { name: 'pelican talk', exact: true }).click();
  await page.getByText('first answer').waitFor();
  assert.deepEqual(problems, []);
});

test('a new session started while a reply still streams stays empty: the reply goes on in the old one', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'slow answer arriving in parts', chunkSize: 12, chunkDelayMs: 700 });
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  await page.getByLabel('Message', { exact: true }).fill('take your time');
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.getByText('slow answer').waitFor();
  const sessions = page.getByRole('complementary', { name: 'Sessions' });
  await sessions.getByRole('button', { name: 'New session' }).click();
  await page.getByText('slow answer').waitFor({ state: 'detached' });
  // The turn ends (the composer takes input again) in the session it ran in, not on screen.
  await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
  assert.equal(await page.locator('.messages').getByText('slow answer').count(), 0, 'the new session shows none of it');
  await sessions.locator('li', { hasText: '2 messages' }).waitFor();
  assert.deepEqual(problems, []);
});

test('an agent is edited, its turns and log are shown, it is cloned; agents are stopped in bulk', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  env!.fake.enqueue({ text: 'a logged turn' });
  assert.equal((await env!.k.request(`/api/agents/${id}/message`, { method: 'POST', json: { message: 'hi' } })).status, 200);
  const { page, problems } = await openPage(env!, `/#/agents/${id}`);
  await page
    .getByRole('list', { name: 'Log of the agent' })
    .getByText(/turn ok/)
    .waitFor();
  await page.getByRole('cell', { name: 'ok', exact: true }).first().waitFor();
  await page.getByLabel('Description', { exact: true }).fill('edited in the browser');
  await page.getByLabel('Instructions (system prompt)').fill('Be brief.');
  await page.getByRole('checkbox', { name: /^file_write / }).uncheck();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page
    .getByRole('status')
    .filter({ hasText: /^Saved / })
    .waitFor();
  const detail = (await (await env!.k.request(`/api/agents/${id}`)).json()) as {
    description: string;
    system_prompt: string;
    capabilities: { tools: string[] };
  };
  assert.equal(detail.description, 'edited in the browser');
  assert.equal(detail.system_prompt, 'Be brief.');
  assert.deepEqual(detail.capabilities.tools, ['file_read']);
  const name = (await page.getByRole('heading', { level: 1 }).textContent())!;
  await page.getByRole('button', { name: 'Clone' }).click();
  await page.getByRole('heading', { name: `${name}-clone`, level: 1 }).waitFor();
  await page.getByRole('link', { name: '← All agents' }).click();
  const bulk = page.getByRole('toolbar', { name: 'Bulk actions' });
  await page.getByLabel(`Select ${name}`, { exact: true }).check();
  await page.getByLabel(`Select ${name}-clone`, { exact: true }).check();
  await bulk.getByRole('button', { name: 'Stop' }).click();
  await bulk.getByText('Stopped: 2 done, 0 failed').waitFor();
  await page
    .getByRole('row', { name: new RegExp(`^Select ${name} `) })
    .getByText('Stopped')
    .waitFor();
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
});

test('the model of the agent is switched from the chat', browserTest, async () => {
  const id = await spawn(env!.k, writer());
  const { models } = (await (await env!.k.request('/api/models?provider=openai')).json()) as { models: { id: string }[] };
  const target = models.find((m) => m.id !== 'fake-model')!.id;
  const { page, problems } = await openPage(env!, `/#/chat/${id}`);
  const field = page.getByLabel('Model', { exact: true });
  await field.fill(target);
  await page.getByRole('button', { name: 'Switch' }).click();
  await page.getByText('Model changed').waitFor();
  const agent = (await (await env!.k.request(`/api/agents/${id}`)).json()) as { model: { model: string } };
  assert.equal(agent.model.model, target);
  assert.deepEqual(problems, []);
});

test(
  'the agent chooser pages through several hundred agents, finds one past the first page by part of its name, and chat works with it',
  browserTest,
  async () => {
    const crowd = 400;
    for (let i = 0; i < crowd; i += 25)
      await Promise.all(Array.from({ length: Math.min(25, crowd - i) }, (_, j) => spawn(env!.k, `name = "crowd-${String(i + j).padStart(4, '0')}"\n`)));
    const [wanted] = (await (await env!.k.request('/api/agents?q=crowd-0345')).json()) as { id: string }[];
    env!.fake.enqueue({ text: 'hello from the crowd' });
    const { page, problems } = await openPage(env!, '/#/chat');
    const picker = page.getByRole('combobox', { name: 'Agent' });
    await picker.click();
    const listbox = page.getByRole('listbox', { name: 'Agents' });
    const options = listbox.getByRole('option');
    await options.first().waitFor();
    const screenful = 30;
    assert.ok((await options.count()) <= screenful, 'a screenful of rows, not every agent');
    assert.deepEqual(await axeViolations(page), [], 'the open list');
    await screenshot(page, 'agent-chooser');
    // Scrolling to the end reads the next page; the page still holds only the rows in view.
    const lastPosition = async () => Number(await options.last().getAttribute('aria-posinset'));
    await listbox.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await waitFor(async () => (await lastPosition()) > 50, 5000, 'the second page');
    assert.ok((await options.count()) <= screenful);
    // By keyboard: type part of the name, move to the match, Enter chooses it.
    await picker.fill('0345');
    await listbox.getByRole('option', { name: /crowd-0345/ }).waitFor();
    assert.equal(await options.count(), 1);
    await picker.press('ArrowDown');
    assert.equal(await picker.getAttribute('aria-activedescendant'), await options.first().getAttribute('id'));
    await picker.press('Enter');
    await page.waitForURL(`**/#/chat/${wanted!.id}`);
    assert.equal(await picker.inputValue(), 'crowd-0345');
    assert.equal(await picker.getAttribute('aria-expanded'), 'false');
    await page.getByLabel('Message', { exact: true }).fill('hi crowd');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    await page.getByText('hello from the crowd').waitFor();
    const session = (await (await env!.k.request(`/api/agents/${wanted!.id}/session`)).json()) as { messages: { content: string }[] };
    assert.ok(
      session.messages.some((m) => m.content === 'hi crowd'),
      'the message went to the agent chosen',
    );
    assert.deepEqual(problems, []);
  },
);
