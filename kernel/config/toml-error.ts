import type { TomlError } from 'smol-toml';

/**
 * A TOML syntax error in words a person editing config.toml can act on: what is wrong at the line and what is allowed.
 * smol-toml describes what its parser met ("control characters are not allowed in strings" for a string whose
 * closing quote is missing); its words follow in parentheses.
 */
export function explainTomlError(text: string, err: TomlError): string {
  const line = text.split('\n')[err.line - 1] ?? '';
  const where = `TOML syntax error at line ${err.line}, column ${err.column}`;
  const said = err.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
  const key = /^\s*([A-Za-z0-9_.-]+)\s*=/.exec(line)?.[1];
  const value = line.slice(line.indexOf('=') + 1).trim();
  let why: string | undefined;
  if (said.startsWith('control characters') && err.column > line.length)
    why = 'a string is not closed: add its closing quote before the end of the line';
  else if (said === 'invalid value' && value === '') why = `'${key}' has no value after '='`;
  else if (said === 'invalid value' && /^[A-Za-z]/.test(value) && !/^(true|false|inf|nan)\b/.test(value))
    why = `a text value goes in quotes: ${key} = "${value.replace(/\s*#.*$/, '')}"`;
  else if (said.startsWith('trying to redefine'))
    why = key ? `'${key}' is set twice in the same table` : `the table on this line is defined twice`;
  else if (said.startsWith('expected comma or end of structure'))
    why = "a list or an inline table is not closed: a ']' or '}' is missing before this line";
  else if (said.startsWith('illegal character in key'))
    why = /^\s*\[/.test(line)
      ? 'a table header is not closed: write [name]'
      : 'each line is a `key = value`, a `[table]` header or a # comment';
  return why ? `${where}: ${why} (${said})` : `${where}: ${said}`;
}
