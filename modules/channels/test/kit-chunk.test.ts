import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunkPieces, chunkText, DISCORD_LIMITS, ircLimits, measure, TELEGRAM_LIMITS, type ChunkLimits } from '../kit/chunk.ts';

/** A seeded generator (mulberry32): a failing input is reproduced by its seed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'a',
  'word',
  'longerword',
  'ünïcödé',
  '日本語',
  '😀',
  '👩‍👩‍👧',
  'e\u0301',
  '&amp;',
  '&#x1F600;',
  '[link](https://x.y/z)',
  '`co de`',
  '<b>',
  'x'.repeat(70),
];
const SEPS = [' ', ' ', ' ', '. ', '! ', '\n', '\n\n', '\r\n', '  \n', '\t'];

/** A random reply, and whether every fence it opens is closed. */
function randomText(r: () => number): { text: string; closed: boolean } {
  const parts: string[] = [];
  let closed = true;
  const n = Math.floor(r() * 160);
  for (let i = 0; i < n; i++) {
    if (r() < 0.04) {
      const lang = ['', 'ts', 'python', 'c++'][Math.floor(r() * 4)];
      const marker = r() < 0.8 ? '```' : '~~~~';
      const body = Array.from({ length: 1 + Math.floor(r() * 12) }, () => WORDS[Math.floor(r() * WORDS.length)] + '  '.repeat(Math.floor(r() * 2))).join(
        r() < 0.5 ? '\n' : ' ',
      );
      const close = r() < 0.9;
      closed &&= close;
      parts.push(`\n${marker}${lang}\n${body}\n${close ? marker : ''}\n`);
    } else parts.push(WORDS[Math.floor(r() * WORDS.length)] + SEPS[Math.floor(r() * SEPS.length)]);
  }
  return { text: (r() < 0.2 ? '\n ' : '') + parts.join(''), closed };
}

/** Fence lines of a chunk: even when every fence it opens is closed (the last chunk may keep the input's own open fence). */
const fenceLines = (s: string) => s.match(/^(?:```|~~~~)/gm)?.length ?? 0;
const lines = (s: string) => (s.match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
const entities = (s: string) =>
  [...s.matchAll(/&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g)].map((m) => [m.index, m.index + m[0].length]);

function checkProperties(text: string, fencesClosed: boolean, limits: ChunkLimits, seed: number): void {
  const pieces = chunkPieces(text, limits);
  const where = `seed ${seed}, limits ${JSON.stringify(limits)}`;
  assert.equal(pieces.map((p) => p.body + p.separator).join(''), text, `concatenation is the input (${where})`);
  let at = 0;
  const cuts: number[] = [];
  for (const p of pieces) {
    const chunk = p.open + p.body + p.close;
    assert.ok(measure(chunk, limits.unit) <= limits.max, `chunk within ${limits.max} ${limits.unit} (${where}): ${JSON.stringify(chunk)}`);
    if (limits.maxLines) assert.ok(p.body === '' || lines(chunk) <= limits.maxLines, `chunk within ${limits.maxLines} lines (${where})`);
    assert.match(p.separator, /^\s*$/, where);
    if (limits.fences !== false && fencesClosed)
      assert.equal(fenceLines(chunk) % 2, 0, `every fence cut at a boundary is closed (${where}): ${JSON.stringify(chunk)}`);
    at += p.body.length;
    cuts.push(at);
    at += p.separator.length;
  }
  const ents = entities(text);
  for (const c of cuts.slice(0, -1)) {
    const code = text.charCodeAt(c - 1);
    assert.ok(!(code >= 0xd800 && code <= 0xdbff), `no cut inside a surrogate pair (${where})`);
    assert.ok(!ents.some(([s, e]) => s < c && c < e), `no cut inside an entity (${where})`);
  }
}

test('random inputs: every chunk is within the limit in its unit, and the pieces put back together are the input', () => {
  const configs: ChunkLimits[] = [
    { max: 60, unit: 'utf16' },
    { max: 200, unit: 'utf16' },
    { max: 80, unit: 'chars', maxLines: 4 },
    { max: 300, unit: 'chars', maxLines: 17 },
    { max: 50, unit: 'bytes', maxLines: 1, fences: false },
    ircLimits('#talon'),
  ];
  for (let seed = 1; seed <= 400; seed++) {
    const r = rng(seed);
    const { text, closed } = randomText(r);
    for (const limits of configs) checkProperties(text, closed, limits, seed);
  }
});

test('text within the limit is one chunk, unchanged', () => {
  assert.deepEqual(chunkText('hello world', TELEGRAM_LIMITS), ['hello world']);
  assert.deepEqual(chunkText('', TELEGRAM_LIMITS), []);
  assert.deepEqual(chunkText('  \n\n ', TELEGRAM_LIMITS), []);
});

test('boundaries are preferred in order: paragraph, line, sentence, word', () => {
  const limits: ChunkLimits = { max: 40, unit: 'utf16' };
  assert.deepEqual(chunkText('First paragraph is here.\n\nsecond one follows on', limits), ['First paragraph is here.', 'second one follows on']);
  assert.deepEqual(chunkText('One line here. More on it\nnext line goes on and on', limits), ['One line here. More on it', 'next line goes on and on']);
  assert.deepEqual(chunkText('A sentence ends here. And another one goes on and on', limits), ['A sentence ends here.', 'And another one goes on and on']);
  assert.deepEqual(chunkText('words words words words words words words words', limits), ['words words words words words words', 'words words']);
});

test('a boundary in the first half of the window loses to a later, lesser one', () => {
  const limits: ChunkLimits = { max: 40, unit: 'utf16' };
  assert.deepEqual(chunkText('Hi.\n\nthen a long paragraph without any breaks at all here', limits), [
    'Hi.\n\nthen a long paragraph without any',
    'breaks at all here',
  ]);
});

test('Telegram counts UTF-16 units: an emoji is two, and a pair is never split', () => {
  const text = '😀'.repeat(3000);
  const chunks = chunkText(text, TELEGRAM_LIMITS);
  assert.deepEqual(
    chunks.map((c) => c.length),
    [4096, 6000 - 4096],
  );
  assert.equal(chunks.join(''), text);
  const odd = chunkText('a' + '😀'.repeat(10), { max: 4, unit: 'utf16' });
  for (const c of odd) assert.doesNotMatch(c, /^[\udc00-\udfff]|[\ud800-\udbff]$/);
});

test('a grapheme cluster is kept whole on a hard cut', () => {
  const family = '👩‍👩‍👧'; // 8 UTF-16 units, one grapheme
  const chunks = chunkText('x'.repeat(6) + family + 'y', { max: 10, unit: 'utf16' });
  assert.deepEqual(chunks, ['x'.repeat(6), family + 'y']);
});

test('Discord: 2,000 characters and at most 17 lines', () => {
  const many = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
  const chunks = chunkText(many, DISCORD_LIMITS);
  assert.deepEqual(
    chunks.map((c) => c.split('\n').length),
    [17, 17, 6],
  );
  const long = 'é'.repeat(2500);
  assert.deepEqual(
    chunkText(long, DISCORD_LIMITS).map((c) => c.length),
    [2000, 500],
  );
  const astral = '𝒳'.repeat(2000); // 4000 UTF-16 units, 2000 characters
  assert.deepEqual(chunkText(astral, DISCORD_LIMITS), [astral]);
});

test('IRC: the byte budget depends on the target, and each chunk is one line', () => {
  const short = ircLimits('#a');
  const long = ircLimits('#a-much-longer-channel-name');
  assert.equal(short.max - long.max, '#a-much-longer-channel-name'.length - 2);
  assert.equal(ircLimits('#a', 'bot!~bot@127.0.0.1').max, 512 - 'PRIVMSG #a :'.length - 2 - ':bot!~bot@127.0.0.1 '.length);
  const text = 'ü'.repeat(300) + '\nsecond line';
  const chunks = chunkText(text, short);
  for (const c of chunks) {
    assert.ok(Buffer.byteLength(`PRIVMSG #a :${c}\r\n`) + 108 <= 512);
    assert.doesNotMatch(c, /[\r\n]/);
  }
  assert.equal(chunks.at(-1), 'second line');
  assert.throws(() => ircLimits('#' + 'x'.repeat(400)), /no room/);
});

test('a code fence cut at a boundary is closed and reopened with its language', () => {
  const code = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`).join('\n');
  const text = `Intro.\n\n\`\`\`ts\n${code}\n\`\`\`\n\nAfter.`;
  const chunks = chunkText(text, { max: 200, unit: 'utf16' });
  assert.ok(chunks.length > 2);
  assert.match(chunks[0], /^Intro\.\n\n```ts\n[^]*\n```$/);
  for (const c of chunks.slice(1, -1)) assert.match(c, /^```ts\n[^`]*\n```$/);
  assert.match(chunks.at(-1)!, /^```ts\n[^`]*\n```\n\nAfter\.$/);
  const rejoined = chunks
    .map((c) =>
      c
        .replace(/^Intro\.\n\n/, '')
        .replace(/^```ts\n/, '')
        .replace(/\n```(\n\nAfter\.)?$/, ''),
    )
    .join('\n');
  assert.equal(rejoined, code);
});

test('a tilde fence and a longer backtick fence close with their own marker', () => {
  const text = '~~~~python\n' + 'print(1)\n'.repeat(20) + '~~~~';
  const chunks = chunkText(text, { max: 60, unit: 'utf16' });
  for (const c of chunks) {
    assert.match(c, /^~~~~python\n/);
    assert.match(c, /\n~~~~$/);
  }
});

test('the fence repair also counts against the line cap', () => {
  const text = '```\n' + Array.from({ length: 40 }, (_, i) => `${i}`).join('\n') + '\n```';
  for (const c of chunkText(text, DISCORD_LIMITS)) assert.ok(c.split('\n').length <= 17, c);
});

test('an entity, a link and an inline code span are never cut', () => {
  const limits: ChunkLimits = { max: 12, unit: 'utf16' };
  assert.deepEqual(chunkText('abcdefghi&amp;x', limits), ['abcdefghi', '&amp;x']);
  const link = 'see [the docs](https://e.x/a)';
  assert.deepEqual(chunkText(link, { max: 25, unit: 'utf16' }), ['see', '[the docs](https://e.x/a)']);
  assert.deepEqual(chunkText('xx `a b c d e`', { max: 12, unit: 'utf16' }), ['xx', '`a b c d e`']);
});

test('an atom longer than the limit is still cut, so every chunk fits', () => {
  const url = `[x](https://e.x/${'p'.repeat(100)})`;
  for (const c of chunkText(url, { max: 30, unit: 'utf16' })) assert.ok(c.length <= 30);
});

test('a limit that cannot hold a character is refused', () => {
  assert.throws(() => chunkText('abc', { max: 1, unit: 'bytes' }), RangeError);
  assert.throws(() => chunkText('abc', { max: 10, unit: 'chars', maxLines: 0 }), RangeError);
});
