/**
 * Prompt templating: `{{input}}` and `{{<output_var>}}` (spaces inside the braces allowed), replaced in one pass —
 * a value that itself contains `{{x}}` is never expanded again. Unknown placeholders stay as written.
 */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export function render(template: string, vars: ReadonlyMap<string, string>): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => vars.get(name) ?? whole);
}

/** The variable names a template uses, each once, in order of first use. */
export function placeholders(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (m) => m[1]))];
}

/**
 * The run input as text and the variables it seeds: a JSON object's top-level keys become variables (strings as
 * they are, other values as JSON), and its string `input` field, when present, is {{input}}.
 */
export function seed(input: string): { input: string; vars: Map<string, string> } {
  const vars = new Map<string, string>();
  let parsed: unknown;
  try {
    parsed = input.trimStart().startsWith('{') ? JSON.parse(input) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { input, vars };
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (key !== 'input') vars.set(key, typeof value === 'string' ? value : value === null ? '' : JSON.stringify(value));
  }
  const field = (parsed as { input?: unknown }).input;
  return { input: typeof field === 'string' ? field : input, vars };
}
