/**
 * Every attachment class reaches the model: on the turn that carries it and in
 * the history replayed on the next turn. The provider speaks the Anthropic
 * wire format, which keeps a message's content blocks apart, so the tests see
 * exactly which blocks were sent (and that adjacent text blocks were merged).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pdf, spawn, startEnv, stopEnv, uploadFile, waitFor, type Env } from './helpers.ts';

type Block = { type: string; text?: string; source?: { type: string; media_type: string; data: string } };
type Sent = { messages: Array<{ role: string; content: Block[] }> };
type File = { name: string; type: string; data: Buffer | string };

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const NOTES: File = { name: 'notes.txt', type: 'text/plain', data: 'buy milk' };
const NO_TEXT = '(No text could be extracted from this PDF: it may be scanned or contain only images.)';

/** `skipped`: the file that must be named in a warning log line. */
const cases: Array<{ name: string; message?: string; files: File[]; expected: Block[]; skipped?: string }> = [
  { name: 'a text file', files: [NOTES], expected: [{ type: 'text', text: 'hello\n\n[Attached file: notes.txt]\nbuy milk' }] },
  {
    name: 'a code file known by its extension, MIME type blank',
    files: [{ name: 'main.rs', type: '', data: 'fn main() {}' }],
    expected: [{ type: 'text', text: 'hello\n\n[Attached file: main.rs]\nfn main() {}' }],
  },
  {
    name: 'a PDF with text',
    files: [{ name: 'doc.pdf', type: 'application/pdf', data: pdf('Quarterly numbers are up') }],
    expected: [{ type: 'text', text: 'hello\n\n[Attached PDF: doc.pdf]\nQuarterly numbers are up' }],
  },
  {
    name: 'a scanned PDF (no text): the note',
    files: [{ name: 'scan.pdf', type: 'application/pdf', data: pdf() }],
    expected: [{ type: 'text', text: `hello\n\n[Attached PDF: scan.pdf]\n${NO_TEXT}` }],
  },
  {
    name: 'an image',
    files: [{ name: 'pixel.png', type: 'image/png', data: Buffer.from(PNG, 'base64') }],
    expected: [
      { type: 'text', text: 'hello' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ],
  },
  {
    name: 'two text files, merged with the message into one block',
    files: [
      { name: 'a.md', type: 'text/markdown', data: '# A' },
      { name: 'b.csv', type: 'text/csv', data: 'x,y' },
    ],
    expected: [{ type: 'text', text: 'hello\n\n[Attached file: a.md]\n# A\n\n[Attached file: b.csv]\nx,y' }],
  },
  {
    name: 'a file of an unknown type is skipped, the others still sent',
    files: [{ name: 'blob.bin', type: 'application/octet-stream', data: Buffer.from([1, 2, 3]) }, NOTES],
    expected: [{ type: 'text', text: 'hello\n\n[Attached file: notes.txt]\nbuy milk' }],
    skipped: 'blob.bin',
  },
  {
    name: 'an empty message with a text file',
    message: '',
    files: [NOTES],
    expected: [{ type: 'text', text: '[Attached file: notes.txt]\nbuy milk' }],
  },
];

describe('attachments reach the model on their turn and in the history of later turns', () => {
  let env: Env;
  before(async () => {
    // Warnings go to the log file, where the skipped-attachment warning is looked for.
    env = await startEnv({ provider: 'anthropic', config: 'log_level = "warn"' });
  });
  after(() => stopEnv(env));

  /** Sends the message with the files, then a plain follow-up; returns the two requests the provider received. */
  async function twoTurns(agentId: string, message: string, files: File[]): Promise<[Sent, Sent]> {
    const ids = [];
    for (const f of files) ids.push(await uploadFile(env.k, agentId, f.name, f.type, f.data));
    env.fake.enqueue({ text: 'first answer' }, { text: 'second answer' });
    const before = env.fake.requests.length;
    const first = await env.k.request(`/api/agents/${agentId}/message`, {
      method: 'POST',
      json: { message, attachments: ids.map((file_id) => ({ file_id })) },
    });
    assert.equal(first.status, 200, await first.clone().text());
    const second = await env.k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'and then?' } });
    assert.equal(second.status, 200, await second.clone().text());
    assert.equal(env.fake.requests.length, before + 2);
    return [env.fake.requests[before].body as Sent, env.fake.requests[before + 1].body as Sent];
  }

  /** The warning lines (level 40) of the kernel's log that name a skipped attachment. */
  function skipWarnings(): string[] {
    return env.k
      .logLines()
      .flatMap((l) => l.split('\n'))
      .filter((line) => line.includes('"level":40') && line.includes('attachment skipped'));
  }

  cases.forEach(({ name, message = 'hello', files, expected, skipped }, i) => {
    test(name, async () => {
      const { agent_id } = await spawn(env.k, `reader-${i}`);
      const [first, second] = await twoTurns(agent_id, message, files);
      assert.deepEqual(first.messages, [{ role: 'user', content: expected }], 'the turn carrying the attachments');
      assert.deepEqual(
        second.messages,
        [
          { role: 'user', content: expected },
          { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
          { role: 'user', content: [{ type: 'text', text: 'and then?' }] },
        ],
        'the history replayed on the next turn',
      );
      // The log file is written asynchronously.
      if (skipped) await waitFor(() => skipWarnings().some((line) => line.includes(`"filename":"${skipped}"`)));
    });
  });
});
