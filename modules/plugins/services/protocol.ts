/**
 * The hook protocol's answers. The service reads stdout from the last line upward and takes the first line that
 * parses as JSON; output without any JSON line becomes {text: <output>} (for hooks whose answer may be text).
 * Each hook's answer is then checked for the fields it must carry.
 */
import type { HookName } from '@talon/plugins';

export class HookFailure extends Error {}

export function lastJsonLine(stdout: string): unknown {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (!line || !'{["tfn-0123456789'.includes(line[0])) continue;
    try {
      return JSON.parse(line);
    } catch {
      // not this one: keep going up
    }
  }
  return undefined;
}

export interface HookReply {
  /** ingest: memories to add to the agent's context. */
  memories?: string[];
  /** assemble: a replacement system prompt. */
  systemPrompt?: string;
  /** compact: a summary of the conversation. */
  summary?: string;
  /** transform_tool_result: the content the model gets. */
  content?: string;
  raw: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The answer of one hook call, checked; HookFailure naming what is missing. */
export function readReply(hook: HookName, stdout: string): HookReply {
  const parsed = lastJsonLine(stdout);
  const text = stdout.trim();
  if (parsed === undefined && !text) throw new HookFailure('the hook printed nothing');
  const raw = isObject(parsed) ? parsed : parsed === undefined ? { text } : { value: parsed };
  if (raw.type === 'error' || typeof raw.error === 'string')
    throw new HookFailure(`the hook reported an error: ${String(raw.error ?? raw.message ?? '')}`.slice(0, 500));
  switch (hook) {
    case 'ingest': {
      if (!Array.isArray(raw.memories)) throw new HookFailure('an ingest answer needs memories: [{content}] (no JSON line with memories was printed)');
      const memories = raw.memories.map((m) => (typeof m === 'string' ? m : isObject(m) && typeof m.content === 'string' ? m.content : undefined));
      if (memories.some((m) => m === undefined)) throw new HookFailure('each memory must be {content: string} or a string');
      return { memories: (memories as string[]).filter((m) => m.trim()), raw };
    }
    case 'assemble':
      if (raw.system_prompt !== undefined && typeof raw.system_prompt !== 'string') throw new HookFailure('system_prompt must be a string');
      if (raw.system_prompt === undefined && !Array.isArray(raw.messages)) throw new HookFailure('an assemble answer needs messages or system_prompt');
      return { systemPrompt: raw.system_prompt as string | undefined, raw };
    case 'compact':
      if (raw.summary !== undefined && typeof raw.summary !== 'string') throw new HookFailure('summary must be a string');
      if (raw.summary === undefined && !Array.isArray(raw.messages)) throw new HookFailure('a compact answer needs messages or summary');
      return { summary: raw.summary as string | undefined, raw };
    case 'transform_tool_result': {
      const content = raw.content ?? raw.text;
      if (typeof content !== 'string') throw new HookFailure('a transform_tool_result answer needs content (a string)');
      return { content, raw };
    }
    default:
      return { raw };
  }
}
