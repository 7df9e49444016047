/** The default, rule-based extractor: what it keeps from a user's message, and what it leaves alone. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractByRules, thirdPerson } from '../services/rules.ts';

const facts = (message: string) => extractByRules(message).memories.map((m) => [m.content, m.level, m.category]);

test('keeps what the user states about themselves, in the third person', () => {
  assert.deepEqual(facts('Hi! My name is Alice Martin and I live in Lyon with my husband.'), [
    ["The user's name is Alice Martin.", 'user', 'name'],
    ['The user lives in Lyon.', 'user', 'home'],
  ]);
  assert.deepEqual(facts('call me Bob. I’m from New York.'), [
    ["The user's name is Bob.", 'user', 'name'],
    ['The user is from New York.', 'user', 'origin'],
  ]);
  assert.deepEqual(facts('I work at Acme Corp as a data engineer.'), [['The user works at Acme Corp.', 'user', 'employer']]);
  assert.deepEqual(facts('I prefer short answers, with code examples.'), [['The user prefers short answers.', 'user', 'preference']]);
  assert.deepEqual(facts('I prefer my coffee black'), [['The user prefers their coffee black.', 'user', 'preference']]);
  assert.deepEqual(facts('I prefer that you answer in French.'), [['The user prefers that you answer in French.', 'user', 'preference']]);
  assert.deepEqual(facts('I really like hiking in the Alps and I hate waking up early.'), [
    ['The user likes hiking in the Alps.', 'user', 'preference'],
    ['The user dislikes waking up early.', 'user', 'preference'],
  ]);
  assert.deepEqual(facts("I don't like long meetings"), [['The user does not like long meetings.', 'user', 'preference']]);
  assert.deepEqual(facts('My favourite editor is Neovim.'), [["The user's favourite editor is Neovim.", 'user', 'preference']]);
  assert.deepEqual(facts('I use Node.js at work.'), [['The user uses Node.js at work.', 'user', 'expertise']]);
  assert.deepEqual(facts("I'm trying to fix the flaky login test in CI."), [
    ['The user is trying to fix the flaky login test in CI.', 'session', 'project_context'],
  ]);
});

test('keeps what the user asks to be remembered, to the end of the sentence', () => {
  assert.deepEqual(facts('Remember that the staging database, unlike prod, is read-only on Fridays. Thanks!'), [
    ['The user asked to remember that the staging database, unlike prod, is read-only on Fridays.', 'user', 'fact'],
  ]);
  assert.deepEqual(facts('ok. Please remember: my sister is called Ann'), [['The user asked to remember that their sister is called Ann.', 'user', 'fact']]);
  assert.deepEqual(facts('Also remember to send me the report'), [['The user asked to be reminded to send them the report.', 'user', 'fact']]);
});

test('single-valued facts are marked so a newer one replaces the old; relations name the user', () => {
  const out = extractByRules('My name is Dana and I work for Initech.');
  assert.deepEqual(
    out.memories.map((m) => m.single),
    [true, true],
  );
  assert.deepEqual(out.relations, [
    { subject: 'User', relation: 'is_named', object: 'Dana', confidence: 0.8 },
    { subject: 'User', relation: 'works_at', object: 'Initech', confidence: 0.8 },
  ]);
  assert.equal(extractByRules('I love jazz').memories[0].single, undefined);
});

test('nothing from small talk, questions, conditions or phrases that only point back', () => {
  for (const message of [
    'hi',
    'Hello, how are you today?',
    'thanks, that was really helpful',
    'lol ok',
    'Good morning!',
    'ok cool, sounds good',
    'I love it!',
    'I like that.',
    'Nice, I like this',
    'I love you',
    "What's my name?",
    'Do I prefer tea?',
    'Can you tell me a joke?',
    'Do you remember what I said?',
    "I can't remember the name of that movie.",
    'If I lived in Paris, where would I eat?',
    'When I work at home I prefer silence',
    'Call me when you are done',
    'I need to go',
    '',
  ]) {
    assert.deepEqual(extractByRules(message), { memories: [], relations: [] }, message);
  }
});

test('thirdPerson rewrites first-person words, keeping the verb agreement', () => {
  assert.equal(
    thirdPerson("my wife and I think I'm right, so I've asked me myself"),
    "their wife and they think they're right, so they've asked them themselves",
  );
  assert.equal(thirdPerson('I am sure it was mine'), 'they are sure it was theirs');
});
