/**
 * The behaviour every channel adapter owes the channels module, as node:test cases run through a real kernel (the
 * channels module, the adapter module, an agent on the scripted FakeProvider) against the adapter's fake or server.
 * An adapter's test file calls channelConformance once with a small harness that drives the platform side; cases the
 * adapter's declared capabilities rule out (threads, typing) or the harness cannot stage are skipped, saying why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startAgentTestKernel, type AgentTestKernel } from './agent-kernel.ts';
import { waitFor } from './wait.ts';

/** The platform side of one adapter, for the suite. Every chat id passed in is fresh per case. */
export interface ChannelHarness {
  /** The configure fields (token, api_url, ...) that point the adapter at the running platform side. */
  configure: Record<string, unknown>;
  /** Configure fields with credentials the platform refuses. */
  badCredentials: Record<string, unknown>;
  /**
   * A direct message from a user; `n` makes the chat distinct per case. With `thread` (platforms whose threads live in
   * direct conversations, see `noGroups`), a reply inside that thread.
   */
  dm(n: number, text: string, options?: { thread?: string }): void | Promise<void>;
  /** A group message, mentioning the bot or not; with `thread`, a reply inside that thread. */
  group(n: number, text: string, options: { mentioned: boolean; thread?: string }): void | Promise<void>;
  /** The texts the platform received for the DM `n` (or group `n`, or that group's thread), oldest first. */
  received(target: { dm: number; thread?: string } | { group: number; thread?: string }): string[] | Promise<string[]>;
  /** How many typing indicators the platform received for DM `n` (adapters with `typing`). */
  typings?(dm: number): number | Promise<number>;
  /** The platform answers the next send with 429 and a retry-after of `seconds`. */
  rateLimitOnce?(seconds: number): void | Promise<void>;
  /** The platform drops the adapter's connection (it must reconnect on its own). */
  dropConnection?(): void | Promise<void>;
  /**
   * Why the platform has no group chats (email): the mention-gating case is skipped saying so, `group` is never
   * called, and the thread case runs in a direct conversation (`dm` with `thread`).
   */
  noGroups?: string;
  /** A direct message carrying a file, with `text` as its caption (platforms a user can send files on). */
  dmMedia?(n: number, file: ConformanceFile, text: string): void | Promise<void>;
  /** The files the platform received in DM `n`, oldest first (adapters with `capabilities.media`). */
  receivedMedia?(target: { dm: number }): ConformanceFile[] | Promise<ConformanceFile[]>;
  /** The platform's chat id of DM `n`, for a send the channels service starts (Channels.send with files). */
  dmChat?(n: number): string;
  /** A thread id for `group` (when the adapter has threads). */
  thread?(n: number): string;
  stop(): Promise<void>;
}

/** A file in the media case; `name` may be absent where the platform keeps none (Telegram photos). */
export interface ConformanceFile {
  name?: string;
  mediaType: string;
  data: Buffer;
}

/** The part of the channels service (`@talon/channels` Channels.send) the media case calls, by its service id. */
interface ChannelSendService {
  send(message: {
    channel: string;
    chatId: string;
    text: string;
    media: Array<{ mediaType: string; name: string; data?: string; url?: string }>;
  }): Promise<{ messageIds: string[] }>;
}

/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

export interface ChannelConformanceOptions {
  /** Title of the suite, e.g. 'channel-telegram'. */
  name: string;
  /** The channel's name (the URL segment of /api/channels/{name}). */
  channel: string;
  /** The modules to boot: at least the channels module's dependencies, channels and the adapter module. */
  only: string[];
  /** The adapter's limits: the chunking case checks every chunk against them. */
  limits: { maxLength: number; unit: 'utf16' | 'chars' | 'bytes' };
  /** Starts the platform side; `kernel` is the running kernel once the cases run (for platforms that POST into it). */
  harness: (kernel: () => AgentTestKernel) => Promise<ChannelHarness>;
  /** Seconds the typing case waits past the reply (the channels module refreshes typing every 4 s). */
  typingQuietSeconds?: number;
  /** More config.toml for the kernel (`module_paths` for an adapter outside the service, as examples/channel-gotify). */
  config?: string;
}

interface ChannelState {
  state: string;
  last_error: string | null;
  capabilities: { threads: boolean; typing: boolean; media: boolean };
}

const measure = (text: string, unit: ChannelConformanceOptions['limits']['unit']) =>
  unit === 'bytes' ? Buffer.byteLength(text) : unit === 'chars' ? [...text].length : text.length;
/** The words of a text, formatting and the whitespace dropped at chunk cuts aside. */
const words = (texts: string[]) => texts.join(' ').split(/\s+/).filter(Boolean);

/** What the cases share: the kernel, the platform side, the adapter's capabilities (set once the suite booted). */
class Suite {
  k!: AgentTestKernel;
  h!: ChannelHarness;
  caps!: ChannelState['capabilities'];
  private n = 0;

  constructor(readonly options: ChannelConformanceOptions) {}

  get channel(): string {
    return this.options.channel;
  }

  /** A chat number no earlier case used. */
  fresh(): number {
    return ++this.n;
  }

  async state(): Promise<ChannelState> {
    return (await (await this.k.request(`/api/channels/${this.channel}`)).json()) as ChannelState;
  }

  async configure(body: Record<string, unknown>): Promise<void> {
    const res = await this.k.request(`/api/channels/${this.channel}/configure`, { method: 'POST', json: body });
    assert.equal(res.status, 200, `configure answered ${res.status}: ${await res.text()}`);
  }

  replies(target: Parameters<ChannelHarness['received']>[0], count: number, ms = 15_000): Promise<string[]> {
    const { h } = this;
    return waitFor(
      async () => ((await h.received(target)).length >= count ? h.received(target) : undefined),
      ms,
      `${count} repl(ies) to ${JSON.stringify(target)}`,
    );
  }

  async problems(): Promise<{ total?: number; items?: unknown[] }> {
    return (await (await this.k.request(`/api/channels/journal/problems?channel=${this.channel}`)).json()) as { total?: number; items?: unknown[] };
  }

  /** Starts the platform side and the kernel, and connects the channel with an open policy. */
  async boot(): Promise<void> {
    const { options } = this;
    this.h = await options.harness(() => this.k);
    this.k = await startAgentTestKernel({ only: options.only, ...(options.config !== undefined ? { config: options.config } : {}) });
    await this.k.spawnAgent('helper');
    await this.configure({ ...this.h.configure, dm_policy: 'open', group_policy: 'mention' });
    await waitFor(async () => (await this.state()).state === 'connected', 15_000, `${this.channel} connected`);
    this.caps = (await this.state()).capabilities;
  }

  async stop(): Promise<void> {
    await this.k?.stop();
    await this.h?.stop();
  }
}

type Case = (s: Suite, t: TestContext) => Promise<void>;

async function directMessage(s: Suite): Promise<void> {
  const { k, h } = s;
  const dm = s.fresh();
  k.fake.enqueue({ text: 'conformance reply' });
  await h.dm(dm, 'hello from conformance');
  assert.deepEqual(await s.replies({ dm }, 1), ['conformance reply']);
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /hello from conformance/);
}

async function mentionGating(s: Suite, t: TestContext): Promise<void> {
  const { k, h } = s;
  if (h.noGroups) return t.skip(h.noGroups);
  const group = s.fresh();
  const asked = k.fake.requests.length;
  await h.group(group, 'just chatting among ourselves', { mentioned: false });
  k.fake.enqueue({ text: 'you called' });
  await h.group(group, 'a question for the bot', { mentioned: true });
  assert.deepEqual(await s.replies({ group }, 1), ['you called']);
  await sleep(300);
  assert.equal(k.fake.requests.length, asked + 1, 'one turn: the unmentioned message made none');
  assert.deepEqual(await h.received({ group }), ['you called']);
}

async function threadReply(s: Suite, t: TestContext): Promise<void> {
  const { k, h, caps } = s;
  if (!caps.threads || !h.thread) return t.skip(caps.threads ? 'the harness stages no threads' : 'the adapter declares no threads');
  const n = s.fresh();
  const thread = h.thread(n);
  k.fake.enqueue({ text: 'in the thread' });
  if (h.noGroups) await h.dm(n, 'a threaded question', { thread });
  else await h.group(n, 'a threaded question', { mentioned: true, thread });
  assert.deepEqual(await s.replies(h.noGroups ? { dm: n, thread } : { group: n, thread }, 1), ['in the thread']);
}

async function longReplyChunked(s: Suite): Promise<void> {
  const { k, h } = s;
  const dm = s.fresh();
  const { maxLength, unit } = s.options.limits;
  const wordsOut = Array.from({ length: Math.ceil((maxLength * 2.5) / 9) }, (_, i) => `w${String(i).padStart(6, '0')}`);
  k.fake.enqueue({ text: wordsOut.join(' ') });
  await h.dm(dm, 'write something long');
  const got = await waitFor(
    async () => {
      const texts = await h.received({ dm });
      return words(texts).length >= wordsOut.length ? texts : undefined;
    },
    30_000,
    'every chunk',
  );
  assert.ok(got.length >= 2, `more than one chunk (${got.length})`);
  for (const c of got) assert.ok(measure(c, unit) <= maxLength, `a chunk of ${measure(c, unit)} ${unit} over ${maxLength}`);
  assert.deepEqual(words(got), wordsOut);
}

async function typingStops(s: Suite, t: TestContext): Promise<void> {
  const { k, h, caps } = s;
  if (!caps.typing || !h.typings) return t.skip(caps.typing ? 'the harness cannot see typing' : 'the adapter declares no typing');
  const dm = s.fresh();
  k.fake.enqueue({ text: 'thought about it', delayMs: 300 });
  await h.dm(dm, 'think first');
  await s.replies({ dm }, 1);
  const shown = await h.typings(dm);
  assert.ok(shown >= 1, 'typing shown while the turn ran');
  await sleep((s.options.typingQuietSeconds ?? 4.5) * 1000);
  assert.equal(await h.typings(dm), shown, 'no typing after the turn');
}

async function rateLimitWaited(s: Suite, t: TestContext): Promise<void> {
  const { k, h } = s;
  if (!h.rateLimitOnce) return t.skip('the harness cannot make the platform answer 429');
  const dm = s.fresh();
  const before = await s.problems();
  await h.rateLimitOnce(1);
  k.fake.enqueue({ text: 'after the wait' });
  await h.dm(dm, 'in a hurry');
  assert.deepEqual(await s.replies({ dm }, 1, 20_000), ['after the wait']);
  await sleep(300);
  assert.deepEqual(await h.received({ dm }), ['after the wait']);
  assert.deepEqual(await s.problems(), before, 'no failed or unknown chunk');
}

async function mediaIn(s: Suite, t: TestContext): Promise<void> {
  const { k, h, caps } = s;
  if (!h.dmMedia) return t.skip('the harness cannot send a file to the bot');
  const dm = s.fresh();
  k.fake.enqueue({ text: 'a pixel' });
  await h.dmMedia(dm, { name: 'pixel.png', mediaType: 'image/png', data: PIXEL }, 'what is in the picture?');
  assert.deepEqual(await s.replies({ dm }, 1), ['a pixel']);
  const seen = JSON.stringify(k.fake.requests.at(-1)!.body.messages);
  assert.match(seen, /what is in the picture\?/);
  const asContent = seen.includes(PIXEL.toString('base64'));
  if (caps.media) assert.ok(asContent, 'the image itself reached the model');
  // Without uploads out, an adapter may still download what comes in (LINE's content API): then the image is content.
  else if (!asContent) assert.match(seen, /pixel\.png/, 'the file is named for the model');
  const notes = s.fresh();
  k.fake.enqueue({ text: 'read it' });
  await h.dmMedia(notes, { name: 'notes.txt', mediaType: 'text/plain', data: Buffer.from('the notes') }, 'see attached');
  assert.deepEqual(await s.replies({ dm: notes }, 1), ['read it']);
  assert.match(JSON.stringify(k.fake.requests.at(-1)!.body.messages), /notes\.txt/);
}

async function mediaOut(s: Suite, t: TestContext): Promise<void> {
  const { h, caps } = s;
  if (!h.dmChat) return t.skip('the harness names no chat for a send of the channels service');
  if (caps.media && !h.receivedMedia) return t.skip('the harness cannot see the files the platform received');
  const dm = s.fresh();
  if (caps.media) await mediaUploaded(s, dm);
  else await mediaLinked(s, dm);
}

/** On a platform that takes files: each goes as an upload, bytes as given, once. */
async function mediaUploaded(s: Suite, dm: number): Promise<void> {
  const { k, h, channel } = s;
  const channels = k.kernel.services.view<ChannelSendService>('channels.service');
  const chatId = h.dmChat!(dm);
  await channels.send({ channel, chatId, text: 'the chart', media: [{ mediaType: 'image/png', name: 'chart.png', data: PIXEL.toString('base64') }] });
  const report = Buffer.from('report body');
  await channels.send({ channel, chatId, text: '', media: [{ mediaType: 'text/plain', name: 'report.txt', data: report.toString('base64') }] });
  const files = await waitFor(async () => ((await h.receivedMedia!({ dm })).length >= 2 ? h.receivedMedia!({ dm }) : undefined), 15_000, 'two uploads');
  assert.equal(files.length, 2, 'each file once');
  assert.deepEqual(files[0]!.data, PIXEL, 'the image uploaded as given');
  assert.equal(files[1]!.name, 'report.txt');
  assert.deepEqual(files[1]!.data, report);
  assert.ok(
    (await h.received({ dm })).some((text) => text.includes('the chart')),
    'the text went too',
  );
}

/** On a platform without uploads: a file by URL goes as a link in the text, content is refused (400), not dropped. */
async function mediaLinked(s: Suite, dm: number): Promise<void> {
  const { k, h, channel } = s;
  const channels = k.kernel.services.view<ChannelSendService>('channels.service');
  const chatId = h.dmChat!(dm);
  const url = 'https://files.example.com/chart.png';
  await channels.send({ channel, chatId, text: 'the chart', media: [{ mediaType: 'image/png', name: 'chart', url }] });
  const texts = await s.replies({ dm }, 1);
  assert.ok(texts.join('\n').includes(url), `the link in the text: ${JSON.stringify(texts)}`);
  await assert.rejects(
    channels.send({ channel, chatId, text: 'x', media: [{ mediaType: 'image/png', name: 'chart.png', data: PIXEL.toString('base64') }] }),
    (err: Error & { statusCode?: number }) => err.statusCode === 400,
    'content for a platform without uploads is refused, not dropped',
  );
}

async function droppedConnection(s: Suite, t: TestContext): Promise<void> {
  const { k, h } = s;
  if (!h.dropConnection) return t.skip('the harness cannot drop the connection');
  const dm = s.fresh();
  await h.dropConnection();
  k.fake.enqueue({ text: 'r1' }, { text: 'r2' }, { text: 'r3' });
  for (const text of ['one', 'two', 'three']) await h.dm(dm, text);
  assert.deepEqual(await s.replies({ dm }, 3, 30_000), ['r1', 'r2', 'r3']);
  await sleep(500);
  assert.deepEqual(await h.received({ dm }), ['r1', 'r2', 'r3'], 'nothing twice');
}

async function badCredentials(s: Suite): Promise<void> {
  const { h } = s;
  await s.configure(h.badCredentials);
  const refused = await waitFor(
    async () => {
      const c = await s.state();
      return c.state !== 'connected' && c.state !== 'connecting' && c.last_error ? c : undefined;
    },
    15_000,
    'refused',
  );
  for (const secret of Object.values(h.badCredentials))
    if (typeof secret === 'string' && secret.length > 6) assert.ok(!refused.last_error!.includes(secret), 'the secret is not shown');
}

/** The cases in the order they run. */
const CASES: ReadonlyArray<readonly [title: string, run: Case]> = [
  ['a direct message is answered through a turn on the agent', directMessage],
  ['in a group, a message not mentioning the bot is ignored and a mention is answered', mentionGating],
  ['a reply inside a thread is answered in that thread', threadReply],
  ["a long reply is chunked within the adapter's limit, all of it delivered in order", longReplyChunked],
  ['the typing indicator stops when the turn ends', typingStops],
  ['a 429 is waited out: the reply still arrives once and no failure is counted', rateLimitWaited],
  ["a file sent in is part of the agent's turn: an image as its content, a document named", mediaIn],
  ['a file sent out goes as an upload where the platform takes files, as a link where it does not', mediaOut],
  ['a dropped connection loses nothing and duplicates nothing', droppedConnection],
  // Last: it leaves the channel stopped.
  ['bad credentials leave the channel not connected with last_error', badCredentials],
];

/** Registers the conformance suite for one adapter. */
export function channelConformance(options: ChannelConformanceOptions): void {
  describe(`${options.name}: channel conformance`, () => {
    const suite = new Suite(options);
    before(() => suite.boot());
    after(() => suite.stop());
    for (const [title, run] of CASES) it(title, (t) => run(suite, t));
  });
}
