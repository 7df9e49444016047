/**
 * The rule file → compiled rules. Rules are data (bundled/injection-rules.json) so they can be read, tested and
 * extended without code; a rule that does not compile stops the module (a security module never fails open).
 */
import { readFileSync } from 'node:fs';
import type { RuleInfo, Severity } from '@talon/prompt-guard';

interface RuleSource {
  id: string;
  category: string;
  severity: Severity;
  message: string;
  kind?: 'regex' | 'codepoints' | 'size';
  anchors?: string[];
  pattern?: string;
  codepoints?: string[];
  max_bytes?: number;
}

export type CompiledRule =
  | (RuleInfo & { kind: 'regex'; anchors: string[]; regex: RegExp })
  | (RuleInfo & { kind: 'codepoints'; ranges: Array<readonly [number, number]> })
  | (RuleInfo & { kind: 'size'; maxBytes: number });

const SEVERITIES = new Set<Severity>(['critical', 'warning', 'info']);

export function loadRules(file: string): CompiledRule[] {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { rules?: RuleSource[] };
  if (!Array.isArray(doc.rules) || doc.rules.length === 0) throw new Error(`${file}: no rules`);
  const seen = new Set<string>();
  return doc.rules.map((source) => {
    if (seen.has(source.id)) throw new Error(`${file}: rule '${source.id}' is defined twice`);
    seen.add(source.id);
    return compile(source, file);
  });
}

function compile(source: RuleSource, file: string): CompiledRule {
  const where = `${file}: rule '${source.id}'`;
  if (!SEVERITIES.has(source.severity)) throw new Error(`${where}: severity must be critical, warning or info`);
  const info: RuleInfo = { id: source.id, category: source.category, severity: source.severity, message: source.message };
  switch (source.kind ?? 'regex') {
    case 'regex': {
      if (!source.pattern) throw new Error(`${where}: pattern missing`);
      const anchors = (source.anchors ?? []).map((a) => a.toLowerCase());
      return { ...info, kind: 'regex', anchors, regex: new RegExp(source.pattern, 'gm') };
    }
    case 'codepoints':
      return { ...info, kind: 'codepoints', ranges: codepointRanges(source.codepoints ?? [], where) };
    case 'size':
      return { ...info, kind: 'size', maxBytes: source.max_bytes ?? 50_000 };
    default:
      throw new Error(`${where}: unknown kind '${String(source.kind)}'`);
  }
}

/** "200B-200F" and "FEFF" entries → ranges. */
function codepointRanges(entries: string[], where: string): Array<readonly [number, number]> {
  return entries.map((entry) => {
    const [lo, hi = lo] = entry.split('-').map((h) => Number.parseInt(h, 16));
    if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi < lo) throw new Error(`${where}: bad code point range '${entry}'`);
    return [lo, hi] as const;
  });
}
