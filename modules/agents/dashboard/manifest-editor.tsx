/**
 * The manifest editor of the spawn form. The TOML is parsed as it is typed (smol-toml), so a syntax error is shown
 * under the editor with its line and column before anything is sent; what the service then refuses (a wrong key or
 * value) is shown in the same place, in the service's words.
 */
import { useMemo } from 'preact/hooks';
import { parse, TomlError } from 'smol-toml';
import { ErrorText } from '@talon/dashboard-kit';

/** The syntax error of a TOML text, in words with its place; undefined when it parses. */
export function tomlProblem(text: string): string | undefined {
  try {
    parse(text);
    return undefined;
  } catch (err) {
    if (err instanceof TomlError) return `Line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}`;
    return (err as Error).message;
  }
}

export function ManifestEditor({ value, onInput, refusal }: { value: string; onInput: (text: string) => void; refusal: unknown }) {
  const syntax = useMemo(() => tomlProblem(value), [value]);
  return (
    <>
      <label for="manifest">Manifest (TOML)</label>
      <textarea
        id="manifest"
        class="code"
        rows={12}
        spellcheck={false}
        value={value}
        aria-invalid={syntax || refusal ? 'true' : undefined}
        aria-describedby="manifest-help manifest-problem"
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <div id="manifest-problem">
        {syntax ? (
          <p class="error" role="alert">
            {syntax}
          </p>
        ) : (
          <ErrorText error={refusal} />
        )}
      </div>
      <p id="manifest-help" class="muted">
        The keys are described in docs/agents.md. The service checks the manifest and names the key that is wrong.
      </p>
    </>
  );
}
