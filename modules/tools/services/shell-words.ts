/**
 * Just enough of POSIX shell syntax to police a command line: splits it into
 * simple commands at unquoted control operators (; & | && || newline) and
 * reports constructs that could run a command the policy never sees
 * (command and process substitution).
 */
export interface ShellCommandLine {
  /** Each simple command as words (quotes removed). */
  commands: string[][];
  /** Source text of each simple command, trimmed. */
  texts: string[];
  /** Non-empty when the line holds `$(...)`, backticks, `<(...)` or `>(...)`. */
  substitutions: string[];
  /** An unterminated quote makes the line unparseable. */
  error?: string;
}

export function parseShellLine(line: string): ShellCommandLine {
  const commands: string[][] = [];
  const texts: string[] = [];
  const substitutions: string[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  let start = 0;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (at: number) => {
    endWord();
    if (words.length) {
      commands.push(words);
      texts.push(line.slice(start, at).trim());
    }
    words = [];
    start = at + 1;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
      continue;
    }
    if (c === '`') substitutions.push('`');
    if (c === '$' && line[i + 1] === '(') substitutions.push('$(');
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
      continue;
    }
    if ((c === '<' || c === '>') && line[i + 1] === '(') substitutions.push(`${c}(`);
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === ';' || c === '&' || c === '|' || c === '\n') {
      endCommand(i);
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return { commands, texts, substitutions, error: `unterminated ${quote} quote` };
  endCommand(line.length);
  return { commands, texts, substitutions };
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The program a simple command runs, skipping leading VAR=value assignments and redirections. */
export function programOf(words: string[]): { program: string; args: string[] } | undefined {
  let i = 0;
  while (i < words.length && (ASSIGNMENT.test(words[i]) || /^\d*[<>]/.test(words[i]))) {
    // A bare redirection operator ("> file") consumes the next word as its target.
    if (/^\d*[<>]+&?$/.test(words[i])) i++;
    i++;
  }
  if (i >= words.length) return undefined;
  return { program: words[i], args: words.slice(i + 1) };
}
