import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage } from '@talon/llm';
import { NOT_RUN_RESULT, repair, toChat } from '../services/history.ts';
import { canonicalJson, LoopGuard } from '../services/loop-guard.ts';
import { redactDeep, redactText } from '../services/redact.ts';
import { classify } from '../services/attachments.ts';

const text = (t: string) => ({ type: 'text' as const, text: t });
const use = (id: string) => ({ type: 'tool_use' as const, id, name: 'echo', input: {} });
const result = (id: string) => ({ type: 'tool_result' as const, toolUseId: id, content: 'ok' });

describe('agents: session repair', () => {
  test('a dangling tool_use gets a synthetic result; an orphan tool_result is dropped', () => {
    const input: ChatMessage[] = [
      { role: 'user', content: [text('hi')] },
      { role: 'assistant', content: [text('calling'), use('a'), use('b')] },
      { role: 'user', content: [result('a'), result('zzz')] },
      { role: 'user', content: [text('next question')] },
    ];
    const out = repair(input);
    assert.equal(out.length, 3);
    assert.deepEqual(out[2].content, [result('a'), { type: 'tool_result', toolUseId: 'b', content: NOT_RUN_RESULT, isError: true }, text('next question')]);
  });

  test('leading assistant messages, empty messages and tool results without a call go; same roles merge; adjacent text merges', () => {
    const out = repair([
      { role: 'assistant', content: [text('orphan answer')] },
      { role: 'user', content: [result('x')] },
      { role: 'user', content: [text('a')] },
      { role: 'user', content: [text('b'), text('')] },
      { role: 'assistant', content: [] },
      { role: 'assistant', content: [text('reply')] },
    ]);
    assert.deepEqual(out, [
      { role: 'user', content: [text('a\n\nb')] },
      { role: 'assistant', content: [text('reply')] },
    ]);
  });

  test('trimming to the last N messages never leaves a result without its call; the summary comes first', () => {
    const stored = [
      { role: 'User' as const, content: 'q', createdAt: '' },
      { role: 'Assistant' as const, content: '', blocks: [use('a')], createdAt: '' },
      { role: 'User' as const, content: '', blocks: [result('a')], createdAt: '' },
      { role: 'Assistant' as const, content: 'answer', createdAt: '' },
    ];
    const out = toChat(stored, 'earlier things', 2);
    assert.deepEqual(out, [
      { role: 'user', content: [text('[Summary of the earlier conversation]\nearlier things')] },
      { role: 'assistant', content: [text('answer')] },
    ]);
  });
});

describe('agents: loop guard', () => {
  test('canonical JSON sorts keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
    assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  });

  test('thresholds are configurable; different inputs count separately', () => {
    const guard = new LoopGuard({ warn_threshold: 2, block_threshold: 3, max_blocked: 2 });
    assert.equal(guard.check('t', { x: 1 }).kind, 'allow');
    assert.equal(guard.check('t', { x: 2 }).kind, 'allow');
    assert.equal(guard.check('t', { x: 1 }).kind, 'warn');
    assert.equal(guard.check('t', { x: 1 }).kind, 'block');
    assert.equal(guard.check('u', { x: 1 }).kind, 'allow');
    assert.equal(guard.check('t', { x: 1 }).kind, 'stop');
  });
});

describe('agents: redactor and file classes', () => {
  test('API keys, bearer tokens and e-mail addresses are removed', () => {
    const out = redactText(
      'key sk-ant-api03-abcdefghijklmnopqrstuv, aws AKIAABCDEFGHIJKLMNOP, Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x.y, mail jo.doe+x@mail.example.com, api_key=hunter2hunter2',
    );
    for (const secret of ['sk-ant-api03', 'AKIAABCDEFGHIJKLMNOP', 'eyJhbGciOiJIUzI1NiJ9', 'jo.doe', 'hunter2'])
      assert.ok(!out.includes(secret), `${secret} in ${out}`);
    assert.deepEqual(redactDeep({ a: ['x@y.io', 3] }), { a: ['[REDACTED_EMAIL]', 3] });
    assert.equal(redactText('nothing secret here'), 'nothing secret here');
  });

  test('files are classed by MIME type, or by extension when the type is blank', () => {
    assert.equal(classify('a.webp', 'image/webp'), 'image');
    assert.equal(classify('a', 'application/pdf'), 'pdf');
    assert.equal(classify('q.graphql', 'application/graphql'), 'text');
    assert.equal(classify('Dockerfile', ''), 'text');
    assert.equal(classify('notebook.ipynb', ''), 'text');
    assert.equal(classify('x.zip', 'application/zip'), 'other');
    assert.equal(classify('x.exe', ''), 'other');
  });
});
