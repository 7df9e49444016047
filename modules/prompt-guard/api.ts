/**
 * Contract of the prompt-guard module: the prompt-injection scanner other
 * modules run over text they are about to trust (skills, hands, plugins).
 * A heuristic, not a boundary: it catches the known shapes of attacks, never
 * all of them; capability checks and process isolation stay the defence.
 */
import { serviceRef } from '@talon/module-sdk';

export type Severity = 'critical' | 'warning' | 'info';

export interface Finding {
  /** The rule's id (bundled/injection-rules.json). */
  rule: string;
  category: string;
  severity: Severity;
  message: string;
  /** The file the text came from, when a set of files was scanned. */
  file?: string;
  /** 1-based line of the match. */
  line: number;
  /** The matched text, shortened. */
  excerpt: string;
}

export interface ScanReport {
  /** The worst severity found, or 'clean'. */
  verdict: Severity | 'clean';
  /** True when a critical finding means the content must be refused. */
  blocked: boolean;
  findings: Finding[];
}

export interface RuleInfo {
  id: string;
  category: string;
  severity: Severity;
  message: string;
}

export interface PromptScanner {
  /** Scans one text. */
  scan(text: string, file?: string): ScanReport;
  /** Scans several files as one report (findings name their file). */
  scanFiles(files: ReadonlyArray<{ path: string; text: string }>): ScanReport;
  /** The loaded rules. */
  rules(): RuleInfo[];
  /** One line naming the findings, for error bodies and logs. */
  summary(report: ScanReport): string;
}

export const promptScanner = serviceRef<PromptScanner>('prompt-guard.scanner');
