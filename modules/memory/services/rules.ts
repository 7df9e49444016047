/**
 * The default fact extractor: phrase rules over the user's message, no LLM
 * call (as the reference's default extractor). It keeps what the user states
 * about themselves in plain first-person phrases ("my name is …", "I prefer …",
 * "I live in …") and what they ask to be remembered. Questions, conditionals
 * and the assistant's answer are left alone: the answer would echo the user or
 * carry the model's own guesses.
 */
import type { Level } from '../config.ts';
import type { Extracted } from './extractor.ts';
import { keywords } from './text.ts';

interface Rule {
  /** Where a phrase starts (the phrase is the text after the match). */
  cue: RegExp;
  /** The stored sentence, from the phrase already put in the third person. */
  fact: (phrase: string) => string;
  level: Level;
  category: string;
  /** A single-valued fact (a name, a home): a newer one replaces the agent's entry of this category. */
  single?: boolean;
  /** Also store the triple (User, relation, phrase). */
  relation?: string;
  /** The part of the phrase to keep; no match drops it. */
  shape?: RegExp;
  /** The phrase runs to the end of the sentence rather than of the clause (whole statements). */
  sentence?: boolean;
  /** Shorter phrases (characters) say too little to keep. */
  minLength?: number;
}

/** At the start of a clause, after an optional "please", "also"... (so "I can't remember the name" is no request). */
const CLAUSE_START = String.raw`(?<=^|[.!?;,:\n]\s*)(?:(?:please|also|and|oh|btw|so)\s+)*`;
/** A named thing (a place, an employer) ends before a linking word: "Lyon with my wife" → "Lyon". */
const ENTITY = /^.+?(?=\s+(?:as|with|since|for|and|but|because|where|which|who|near|until)\b|$)/u;
/** A name: a first word, then capitalised words ("alice", "Jean Luc Picard", not "Alice and I"). */
const NAME = /^[\p{L}][\p{L}'.-]*(?:\s+\p{Lu}[\p{L}'.-]*)*/u;
const CAPITALISED_NAME = /^\p{Lu}[\p{L}'.-]*(?:\s+\p{Lu}[\p{L}'.-]*)*/u;

const cue = (source: string) => new RegExp(source, 'giu');

const RULES: Rule[] = [
  {
    cue: cue(String.raw`${CLAUSE_START}(?:remember|keep in mind|don't forget)(?:\s+that\b|\s*:)?\s*`),
    fact: (p) => (/^to\s/i.test(p) ? `The user asked to be reminded ${p}.` : `The user asked to remember that ${p}.`),
    level: 'user',
    category: 'fact',
    sentence: true,
    minLength: 4,
  },
  { cue: cue(String.raw`\bmy name(?: is|'s)\s+`), shape: NAME, fact: (p) => `The user's name is ${p}.`, ...single('name', 'is_named') },
  { cue: /\bcall me\s+/giu, shape: CAPITALISED_NAME, fact: (p) => `The user's name is ${p}.`, ...single('name', 'is_named') },
  { cue: cue(String.raw`\bI live in\s+`), shape: ENTITY, fact: (p) => `The user lives in ${p}.`, ...single('home', 'lives_in') },
  { cue: cue(String.raw`\bI(?:'m| am| come) from\s+`), shape: ENTITY, fact: (p) => `The user is from ${p}.`, ...single('origin', 'is_from') },
  { cue: cue(String.raw`\bI work (?:at|for)\s+`), shape: ENTITY, fact: (p) => `The user works at ${p}.`, ...single('employer', 'works_at') },
  { cue: cue(String.raw`\bI work as\s+`), fact: (p) => `The user works as ${p}.`, ...single('occupation', 'works_as') },
  { cue: cue(String.raw`\bmy job is\s+`), fact: (p) => `The user's job is ${p}.`, ...single('occupation', 'works_as') },
  { cue: cue(String.raw`\bI (?:really |much |generally |usually |always )?prefer\s+`), fact: (p) => `The user prefers ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI(?:'d| would) rather\s+`), fact: (p) => `The user would rather ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI (?:really )?like\s+`), fact: (p) => `The user likes ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI (?:really )?love\s+`), fact: (p) => `The user loves ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI (?:really )?enjoy\s+`), fact: (p) => `The user enjoys ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI (?:really )?(?:don't|do not) like\s+`), fact: (p) => `The user does not like ${p}.`, ...preference() },
  { cue: cue(String.raw`\bI (?:really )?(?:dislike|hate|can't stand)\s+`), fact: (p) => `The user dislikes ${p}.`, ...preference() },
  { cue: cue(String.raw`\bmy favou?rite\s+`), shape: /^[\p{L}\s-]+?\s+(?:is|are)\s+.+/u, fact: (p) => `The user's favourite ${p}.`, ...preference() },
  {
    cue: cue(String.raw`\bI(?:'m| am) using\s+|\bI (?:mostly |mainly |usually )?use\s+`),
    fact: (p) => `The user uses ${p}.`,
    level: 'user',
    category: 'expertise',
    relation: 'uses',
  },
  {
    cue: cue(String.raw`\bI (?:code|program|develop|write code) in\s+`),
    fact: (p) => `The user codes in ${p}.`,
    level: 'user',
    category: 'expertise',
    relation: 'uses',
  },
  { cue: cue(String.raw`\bI(?:'m| am) trying to\s+`), fact: (p) => `The user is trying to ${p}.`, ...task() },
  { cue: cue(String.raw`\bI(?:'m| am) working on\s+`), fact: (p) => `The user is working on ${p}.`, ...task() },
  { cue: cue(String.raw`\bI need to\s+`), fact: (p) => `The user needs to ${p}.`, ...task() },
];

function single(category: string, relation: string): Pick<Rule, 'level' | 'category' | 'single' | 'relation'> {
  return { level: 'user', category, single: true, relation };
}

function preference(): Pick<Rule, 'level' | 'category'> {
  return { level: 'user', category: 'preference' };
}

/** What the user is doing now matters for this conversation only. */
function task(): Pick<Rule, 'level' | 'category' | 'minLength'> {
  return { level: 'session', category: 'project_context', minLength: 10 };
}

const CLAUSE_END = /[,;:!?\n]|\.(?=\s|$)|\s+(?:and|but|so|because)\s+(?=(?:I|my|we)\b)/u;
const SENTENCE_END = /[!?\n]|\.(?=\s|$)/u;
/** A phrase that only points back at the conversation ("I like that", "I love it") says nothing by itself; "that you…" does. */
const DEICTIC = /^(?:it|this|these|those|them|him|her|you|so)\b|^that\b(?!\s+(?:you|the|we|i|my|your|our|it's)\b)/iu;
const CONDITIONAL = /\b(?:if|whether|unless|when|would|do|does|did)\b/iu;
const MAX_PHRASE = 200;

/** First-person words in a phrase, in the third person ("my coffee" → "their coffee"); "they" takes the verb "I" takes. */
const FIRST_PERSON = /\b(?:I'm|I am|I was|I've|I'd|I'll|I|me|my|mine|myself)\b/giu;
const THIRD_PERSON: Record<string, string> = {
  "i'm": "they're",
  'i am': 'they are',
  'i was': 'they were',
  "i've": "they've",
  "i'd": "they'd",
  "i'll": "they'll",
  i: 'they',
  me: 'them',
  my: 'their',
  mine: 'theirs',
  myself: 'themselves',
};

export function thirdPerson(phrase: string): string {
  return phrase.replace(FIRST_PERSON, (word) => THIRD_PERSON[word.toLowerCase()] ?? word);
}

/** Facts the user's message states, by the rules above; nothing for small talk or questions. */
export function extractByRules(message: string): Extracted {
  const text = message.replace(/[\u2018\u2019]/g, "'");
  const out: Extracted = { memories: [], relations: [] };
  for (const rule of RULES) {
    for (const match of text.matchAll(rule.cue)) {
      const phrase = phraseAt(text, match, rule);
      if (phrase === undefined) continue;
      const content = rule.fact(phrase);
      if (out.memories.some((m) => m.content === content)) continue;
      out.memories.push({ content, level: rule.level, category: rule.category, ...(rule.single && { single: true }) });
      if (rule.relation) out.relations.push({ subject: 'User', relation: rule.relation, object: phrase, confidence: 0.8 });
    }
  }
  return out;
}

/** The phrase after a cue, in the third person; undefined when the statement is a question, a condition or says nothing. */
function phraseAt(text: string, match: RegExpExecArray, rule: Rule): string | undefined {
  const start = match.index + match[0].length;
  const rest = text.slice(start);
  const end = rest.search(rule.sentence ? SENTENCE_END : CLAUSE_END);
  if (rest[end] === '?') return undefined;
  const clauseBefore =
    text
      .slice(0, match.index)
      .split(/[.!?;,\n]/)
      .pop() ?? '';
  if (CONDITIONAL.test(clauseBefore)) return undefined;
  let phrase = (end < 0 ? rest : rest.slice(0, end)).trim();
  if (rule.shape) phrase = rule.shape.exec(phrase)?.[0].trim() ?? '';
  if (phrase.length < (rule.minLength ?? 1) || phrase.length > MAX_PHRASE) return undefined;
  if (DEICTIC.test(phrase) || !keywords(phrase).length) return undefined;
  return thirdPerson(phrase);
}
