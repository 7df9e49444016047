/**
 * The scanner: normalise once, then each regex rule whose anchor occurs (a plain substring search, so most rules
 * cost one indexOf over the text), plus the code-point and size rules. One finding per rule and line.
 */
import type { Finding, PromptScanner, RuleInfo, ScanReport, Severity } from '@talon/prompt-guard';
import type { CompiledRule } from './rules.ts';
import { invisibleMatcher, normalise } from './normalise.ts';

const RANK: Record<Severity | 'clean', number> = { clean: 0, info: 1, warning: 2, critical: 3 };
/** Findings beyond this many per report are dropped (a hostile file could otherwise make the answer huge). */
const MAX_FINDINGS = 100;
const EXCERPT = 80;

export class Scanner implements PromptScanner {
  private readonly invisible: RegExp;
  private readonly anchors: string[];
  /** The alternation of every anchor, compiled once: a scan of clean text is one pass of it. */
  private readonly anyAnchor: RegExp | undefined;

  constructor(private readonly compiled: CompiledRule[]) {
    this.invisible = invisibleMatcher(compiled.flatMap((r) => (r.kind === 'codepoints' ? r.ranges : [])));
    this.anchors = [...new Set(compiled.flatMap((r) => (r.kind === 'regex' ? r.anchors : [])))];
    this.anyAnchor = this.anchors.length ? alternation(this.anchors) : undefined;
  }

  rules(): RuleInfo[] {
    return this.compiled.map(({ id, category, severity, message }) => ({ id, category, severity, message }));
  }

  scan(text: string, file?: string): ScanReport {
    return report(this.findings(text, file));
  }

  scanFiles(files: ReadonlyArray<{ path: string; text: string }>): ScanReport {
    return report(files.flatMap((f) => this.findings(f.text, f.path)));
  }

  summary(scan: ScanReport): string {
    const worst = scan.findings.filter((f) => f.severity === scan.verdict);
    const parts = worst.slice(0, 5).map((f) => `${f.rule} (${f.file ? `${f.file}:` : 'line '}${f.line}): ${f.message}`);
    return parts.join('; ') + (worst.length > 5 ? `; and ${worst.length - 5} more` : '');
  }

  private findings(raw: string, file?: string): Finding[] {
    const { text, hidden } = normalise(raw, this.invisible);
    const present = anchorsIn(text, this.anchors, this.anyAnchor);
    const out: Finding[] = [];
    const add = (rule: CompiledRule, line: number, excerpt: string) => {
      out.push({ rule: rule.id, category: rule.category, severity: rule.severity, message: rule.message, ...(file && { file }), line, excerpt });
    };
    for (const rule of this.compiled) {
      if (rule.kind === 'size') {
        if (Buffer.byteLength(raw) > rule.maxBytes) add(rule, 1, `${Buffer.byteLength(raw)} bytes`);
      } else if (rule.kind === 'codepoints') {
        const hits = hidden.filter((cp) => rule.ranges.some(([lo, hi]) => cp >= lo && cp <= hi));
        if (hits.length) add(rule, 1, `${hits.length} × ${[...new Set(hits)].map((cp) => `U+${cp.toString(16).toUpperCase()}`).join(', ')}`);
      } else if (!rule.anchors.length || rule.anchors.some((a) => present.has(a))) {
        this.matchRegex(rule, text, add);
      }
    }
    return out;
  }

  private matchRegex(rule: Extract<CompiledRule, { kind: 'regex' }>, text: string, add: (rule: CompiledRule, line: number, excerpt: string) => void): void {
    const lines = new Set<number>();
    rule.regex.lastIndex = 0;
    for (const m of text.matchAll(rule.regex)) {
      const line = lineOf(text, m.index);
      if (!lines.has(line)) add(rule, line, m[0].slice(0, EXCERPT));
      lines.add(line);
      if (lines.size >= MAX_FINDINGS) break;
    }
  }
}

/**
 * Which anchors occur, in one pass per anchor found: an alternation of the anchors not yet seen, restarted
 * (without the one just seen) where the last match began, so each anchor is found once and none is skipped.
 */
function anchorsIn(text: string, anchors: readonly string[], all: RegExp | undefined): Set<string> {
  const found = new Set<string>();
  const remaining = new Set(anchors);
  for (let pos = 0; remaining.size;) {
    // The first pass looks for any anchor (compiled once); later ones only for those not found yet.
    const re = remaining.size === anchors.length && all ? all : alternation([...remaining]);
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) break;
    found.add(m[0]);
    remaining.delete(m[0]);
    pos = m.index;
  }
  return found;
}

function alternation(anchors: readonly string[]): RegExp {
  return new RegExp(anchors.map(escapeRegex).join('|'), 'g');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function report(all: Finding[]): ScanReport {
  const findings = all.sort((a, b) => RANK[b.severity] - RANK[a.severity]).slice(0, MAX_FINDINGS);
  const verdict = findings.reduce<Severity | 'clean'>((worst, f) => (RANK[f.severity] > RANK[worst] ? f.severity : worst), 'clean');
  return { verdict, blocked: verdict === 'critical', findings };
}
