/**
 * The Media view in a real browser (Debian's Chromium through playwright-core, as the dashboard's browser tests), with
 * an API key set: the providers table, speech from the form played, a WAV transcribed, a video task of the scripted
 * driver (test/fixtures/modules/media-scripted) completed and played, another cancelled and staying cancelled, and
 * every generated file fetched with the key (an <img>/<audio>/<video> cannot send it: the view shows blob: URLs).
 * Speech and transcription are real: media-local with flite and pocketsphinx. Without /usr/bin/chromium it is
 * skipped outside CI (apt-get install -y chromium); without the engines, the tests that need them are skipped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page, type Request } from 'playwright-core';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { VideoTaskView } from '@talon/media';
import { clearProviderEnv, scriptedModule } from './video-setup.ts';

clearProviderEnv();

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) && !process.env.CI ? `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` : false;
const browserTest = { skip, timeout: 90_000 };
const onPath = (program: string) => (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(`${dir}/${program}`));
const ENGINES = onPath('flite') && onPath('pocketsphinx_continuous') && existsSync('/usr/share/pocketsphinx/model/en-us');
const engineTest = {
  ...browserTest,
  skip: skip || (ENGINES ? false : 'needs flite, pocketsphinx and pocketsphinx-en-us (apt install flite pocketsphinx pocketsphinx-en-us)'),
};

const KEY = 'media-browser-key-0123456789abcdef';
const SENTENCE = 'The library opened a new reading room for students and older visitors.';
/** Every poll of a scripted task 50 ms to 1 s apart: a short task ends in well under a second, a long one waits. */
const CONFIG = [
  `api_key = "${KEY}"`,
  `module_paths = ["${scriptedModule}"]`,
  '[media]',
  'provider_order = ["local", "scripted"]',
  'video_poll_first_secs = 0.05',
  'video_poll_factor = 2',
  'video_poll_max_secs = 1',
  '',
].join('\n');
const MODULES = ['dashboard', 'auth', 'security-headers', 'error-envelope', 'system', 'media', 'media-local', 'media-scripted'];

let k: TestKernel | undefined;
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];
/** The page's requests for generated files. */
const fileRequests: Request[] = [];

before(async () => {
  if (skip) return;
  k = await startTestKernel({ only: MODULES, config: CONFIG });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(15_000);
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('request', (r) => r.url().includes('/api/uploads/') && fileRequests.push(r));
  // Signed in with the key, as the sign-in screen leaves it: in this tab's sessionStorage.
  await page.goto(`${k.url}/#/media`);
  await page.evaluate((key) => sessionStorage.setItem('talon.api_key', key), KEY);
  await page.reload();
});
after(async () => {
  await browser?.close();
  await k?.stop();
});

const api = (path: string, init: { method?: string; json?: unknown } = {}) => k!.request(path, { ...init, headers: { authorization: `Bearer ${KEY}` } });

/** The task list once no listing is loading (a list read mid-reload is the old one). */
async function tasks(): Promise<Locator> {
  const list = page.getByRole('list', { name: 'Video tasks' });
  await list.and(page.locator('[aria-busy="false"]')).waitFor();
  return list;
}

/** Waits until a media element has loaded its metadata, and answers its duration and source. */
async function loaded(element: Locator): Promise<{ duration: number; src: string }> {
  await element.waitFor();
  const handle = await element.elementHandle();
  await page.waitForFunction((el) => (el as HTMLMediaElement).readyState >= 1 || (el as HTMLMediaElement).error !== null, handle, { timeout: 15_000 });
  return element.evaluate((el: HTMLMediaElement) => ({ duration: el.error ? -1 : el.duration, src: el.currentSrc }));
}

test('the view is listed, and the providers table shows local with what it can do on this host', browserTest, async () => {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Media', exact: true }).waitFor();
  const local = page.getByRole('row', { name: /^local\b/ });
  await local.getByText('configured', { exact: true }).waitFor();
  if (ENGINES) await local.getByRole('cell', { name: 'speech, transcription' }).waitFor();
  await page
    .getByRole('row', { name: /^scripted\b/ })
    .getByRole('cell', { name: 'video', exact: true })
    .waitFor();
  // No configured provider makes images or music here: their forms say so.
  await page.getByRole('form', { name: 'Generate an image' }).getByText('No provider here can do this.').waitFor();
  assert.equal(
    await page
      .getByRole('form', { name: 'Generate speech' })
      .getByText(/No provider|Not configured/)
      .count(),
    0,
  );
});

test('speech from the form plays: an <audio> with a blob: source and a duration', engineTest, async () => {
  const form = page.getByRole('form', { name: 'Generate speech' });
  await form.getByLabel('Text').fill(SENTENCE);
  await form.getByLabel('Format').selectOption('wav');
  await form.getByRole('button', { name: 'Speak' }).click();
  const done = form.getByRole('status', { name: 'Generated speech' });
  await done.getByText(/^local · .* · wav · \d+\.\d s · \d+ Hz$/).waitFor({ timeout: 30_000 });
  const audio = await loaded(done.locator('audio'));
  assert.match(audio.src, /^blob:/);
  assert.ok(audio.duration > 1, `the speech lasts ${audio.duration} s`);
});

test('an uploaded WAV is transcribed and its text shown', engineTest, async () => {
  const speech = await api('/api/media/speech', { method: 'POST', json: { text: SENTENCE, format: 'wav', provider: 'local' } });
  assert.equal(speech.status, 200, await speech.clone().text());
  const wav = Buffer.from(await (await api(((await speech.json()) as { url: string }).url)).arrayBuffer());
  const form = page.getByRole('form', { name: 'Transcribe audio' });
  await form.getByLabel('Audio file').setInputFiles({ name: 'library.wav', mimeType: 'audio/wav', buffer: wav });
  await form.getByRole('button', { name: 'Transcribe' }).click();
  const text = (await form.getByRole('status', { name: 'Transcript' }).locator('blockquote').textContent({ timeout: 30_000 })) ?? '';
  const heard = ['library', 'reading', 'room', 'students', 'visitors'].filter((w) => text.toLowerCase().includes(w));
  assert.ok(heard.length >= 3, `the transcript "${text}" has the sentence's words`);
});

test('a video task appears, completes and plays in the page', browserTest, async () => {
  const form = page.getByRole('form', { name: 'Generate a video' });
  await form.getByLabel('Prompt').fill('a red kite over hills polls=3');
  await form.getByRole('button', { name: 'Submit video task' }).click();
  await waitFor(async () => (await form.getByLabel('Prompt').inputValue()) === '', 10_000, 'the form cleared once submitted');
  const item = (await tasks()).getByRole('listitem', { name: 'Video task a red kite over hills polls=3' });
  // Processing when listed; read again every 3 s until it ends (the scripted task ends in under a second).
  await item.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 20_000 });
  await item.getByText('scripted-1 · 160×90 · 1 s').waitFor();
  const video = await loaded(item.getByLabel('Video of a red kite over hills polls=3'));
  assert.match(video.src, /^blob:/);
  assert.ok(video.duration > 0, `the video plays (duration ${video.duration} s)`);
});

test('a processing task is cancelled from the list and stays cancelled', browserTest, async () => {
  const form = page.getByRole('form', { name: 'Generate a video' });
  await form.getByLabel('Prompt').fill('a slow boat polls=100000');
  await form.getByRole('button', { name: 'Submit video task' }).click();
  const item = (await tasks()).getByRole('listitem', { name: 'Video task a slow boat polls=100000' });
  await item.getByRole('progressbar', { name: 'Progress of a slow boat polls=100000' }).waitFor();
  await item.getByRole('button', { name: 'Cancel video task a slow boat polls=100000' }).click();
  await item.getByRole('button', { name: 'Cancel the task now' }).click();
  await item.locator('.badge', { hasText: 'cancelled' }).waitFor();
  assert.equal(await item.getByRole('progressbar').count(), 0);
  const id = await item.getAttribute('data-task');
  const status = async () => ((await (await api(`/api/media/video/${id}`)).json()) as VideoTaskView).status;
  assert.equal(await status(), 'cancelled');
  // Polls were due every second: past two of them it is still cancelled.
  await new Promise((r) => setTimeout(r, 2_500));
  assert.equal(await status(), 'cancelled');
});

test('with an API key every generated file was fetched with it, and nothing went wrong in the page', browserTest, async () => {
  await waitFor(() => fileRequests.length >= (ENGINES ? 2 : 1), 5_000, 'the page fetched the generated files');
  for (const r of fileRequests) assert.equal((await r.allHeaders()).authorization, `Bearer ${KEY}`, r.url());
  // Without the key a file is refused: the page could not have shown it by URL.
  const url = new URL(fileRequests[0]!.url());
  assert.equal((await k!.request(url.pathname)).status, 401);
  const sources = await page
    .locator('audio, video, img.media-result')
    .evaluateAll((els) => els.map((el) => (el as HTMLMediaElement).currentSrc || el.getAttribute('src')));
  assert.ok(sources.length > 0 && sources.every((s) => s?.startsWith('blob:')), sources.join(', '));
  assert.deepEqual(problems, []);
});
