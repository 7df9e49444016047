import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatReply, toPlainText, toSlackMrkdwn, toTelegramHtml } from '../kit/format.ts';

/** Every tag a Telegram HTML output holds is one Telegram accepts. */
function assertTelegramSubset(html: string): void {
  for (const m of html.matchAll(/<\/?([a-z]+)([^>]*)>/g)) {
    assert.ok(['b', 'i', 's', 'u', 'code', 'pre', 'a', 'blockquote'].includes(m[1]), `tag <${m[1]}> in ${html}`);
    if (m[2]) assert.match(m[2], /^ (href="[^"<>]*"|class="language-[A-Za-z0-9_+#.-]+")$/, `attributes of <${m[1]}> in ${html}`);
  }
}

test('Telegram HTML: emphasis, code, links, quotes, lists and headings map to its subset', () => {
  const md = [
    '# Title',
    '',
    'Some **bold**, *italic*, ~~gone~~ and `a<b>` code, [docs](https://example.com/a?x=1&y=2).',
    '',
    '```python',
    'if a < b and c > d: print("&")',
    '```',
    '',
    '> quoted',
    '',
    '- one',
    '- two',
    '',
    '1. first',
    '2. second',
  ].join('\n');
  const html = toTelegramHtml(md);
  assert.equal(
    html,
    [
      '<b>Title</b>',
      '',
      'Some <b>bold</b>, <i>italic</i>, <s>gone</s> and <code>a&lt;b&gt;</code> code, <a href="https://example.com/a?x=1&amp;y=2">docs</a>.',
      '',
      '<pre><code class="language-python">if a &lt; b and c &gt; d: print(&quot;&amp;&quot;)</code></pre>',
      '',
      '<blockquote>quoted</blockquote>',
      '',
      '• one\n• two',
      '',
      '1. first\n2. second',
    ].join('\n'),
  );
  assertTelegramSubset(html);
});

test('Telegram HTML: raw HTML from the model comes out as visible text, not markup', () => {
  const html = toTelegramHtml('hi <script>alert(1)</script> <a href="javascript:x">y</a> <b onclick="x">z</b>\n\n<div>block</div>');
  assertTelegramSubset(html);
  assert.equal(
    html,
    'hi &lt;script&gt;alert(1)&lt;/script&gt; &lt;a href=&quot;javascript:x&quot;&gt;y&lt;/a&gt; &lt;b onclick=&quot;x&quot;&gt;z&lt;/b&gt;\n\n&lt;div&gt;block&lt;/div&gt;',
  );
});

test('links keep only http, https, mailto and tg; anything else keeps its text only', () => {
  for (const href of [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<b>',
    'file:///etc/passwd',
    'vbscript:x',
    '/relative',
    '&#106;avascript:alert(1)',
  ]) {
    const md = `[click](${href.replace(/\t/g, '&#9;')})`;
    assert.equal(toTelegramHtml(md), 'click', md);
    assert.equal(toSlackMrkdwn(md), 'click', md);
    assert.equal(toPlainText(md), 'click', md);
  }
  assert.equal(toTelegramHtml('[me](tg://resolve?domain=talon)'), '<a href="tg://resolve?domain=talon">me</a>');
  assert.equal(toTelegramHtml('[mail](mailto:a@b.c)'), '<a href="mailto:a@b.c">mail</a>');
  assert.equal(toSlackMrkdwn('[me](tg://resolve?domain=talon)'), 'me', 'Slack has no tg: links');
});

test('a quote in an href cannot close the attribute', () => {
  const html = toTelegramHtml('[x](<mailto:a@b.c?subject="><script>>)');
  assertTelegramSubset(html);
  assert.doesNotMatch(html, /<script/);
});

test('entity references are decoded once, then escaped: nested entities stay text', () => {
  assert.equal(toTelegramHtml('AT&amp;T &lt;b&gt;'), 'AT&amp;T &lt;b&gt;');
  assert.equal(toTelegramHtml('&amp;lt;script&amp;gt;'), '&amp;lt;script&amp;gt;');
  assert.equal(toPlainText('&amp;lt;script&amp;gt;'), '&lt;script&gt;');
  assert.equal(toPlainText('&#38;lt;b&#38;gt;'), '&lt;b&gt;');
  assert.equal(toPlainText('&#60;b&#x3E; &copy; &#0; &#x1F600;'), '<b> &copy; \ufffd 😀');
  assert.equal(toSlackMrkdwn('&lt;!channel&gt;'), '&lt;!channel&gt;');
});

test('nested blockquotes become one Telegram blockquote (Telegram refuses nesting)', () => {
  const html = toTelegramHtml('> outer\n> > inner');
  assert.equal(html, '<blockquote>outer\n\n&gt; inner</blockquote>');
  assert.equal((html.match(/<blockquote>/g) ?? []).length, 1);
});

test('a language name that is not one is left out of the class', () => {
  assert.equal(toTelegramHtml('```x"><script>\ncode\n```'), '<pre>code</pre>');
  assert.equal(toTelegramHtml('```c++\ncode\n```'), '<pre><code class="language-c++">code</code></pre>');
});

test('Slack mrkdwn: its own markers, &, < and > escaped, links as <url|text>', () => {
  const md =
    '**bold** *it* ~~del~~ `x<y` a & b <@U123> <!here>\n\n[docs](https://e.x/?a=1&b=2) https://e.x/plain\n\n```js\nif (a<b) {}\n```\n\n> q\n\n- a\n  - b';
  assert.equal(
    toSlackMrkdwn(md),
    [
      '*bold* _it_ ~del~ `x&lt;y` a &amp; b &lt;@U123&gt; &lt;!here&gt;',
      '',
      '<https://e.x/?a=1&amp;b=2|docs> <https://e.x/plain>',
      '',
      '```\nif (a&lt;b) {}\n```',
      '',
      '> q',
      '',
      '• a\n  • b',
    ].join('\n'),
  );
});

test('Slack: a pipe or > in a URL cannot end the link early', () => {
  const out = toSlackMrkdwn('[t](https://e.x/a|b>c)');
  assert.equal(out, '<https://e.x/a%7Cb%3Ec|t>');
});

test('plain text: no markup, links as "text (url)", a table as rows', () => {
  const md =
    '## Head\n\nA **b** [docs](https://e.x/d) and <https://e.x/auto>, ![pic](https://e.x/p.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n---\n\n```\nraw *code*\n```';
  assert.equal(
    toPlainText(md),
    [
      'Head',
      '',
      'A b docs (https://e.x/d) and https://e.x/auto, pic (https://e.x/p.png)',
      '',
      'a | b\n1 | 2',
      '',
      '- ☑ done\n- ☐ todo',
      '',
      '———',
      '',
      'raw *code*',
    ].join('\n'),
  );
});

test('plain text drops control characters: no IRC formatting codes, no CR to start a second IRC command', () => {
  const out = toPlainText('hi\r\nQUIT :bye\u0002bold\u0003color\u0000 &#13;x &#7;');
  assert.doesNotMatch(out, /[\r\u0000-\u0008\u000b-\u001f]/);
  assert.equal(out, 'hi\nQUIT :byeboldcolor x ');
});

test('formatReply picks the adapter format; markdown passes through', () => {
  assert.equal(formatReply('**a**', 'telegram_html'), '<b>a</b>');
  assert.equal(formatReply('**a**', 'slack_mrkdwn'), '*a*');
  assert.equal(formatReply('**a**', 'plain'), 'a');
  assert.equal(formatReply('**a**\r\n\u0007', 'markdown'), '**a**\n');
});
