import { stringify } from 'smol-toml';
import type { JsonSchema } from '@talon/module-sdk';

type Schema = { type?: string; default?: unknown; description?: string; properties?: Record<string, Schema>; 'x-module'?: string };

function line(key: string, s: Schema): string {
  const assignment = s.default === undefined ? `${key} =` : stringify({ [key]: s.default }).trim();
  return `# ${assignment}${s.description ? `   # ${s.description}` : ''}`;
}

/**
 * The commented config.toml written at first start: every key of the kernel
 * and of the enabled modules with its default and description, generated
 * from their schemas so it never drifts from the code.
 */
export function renderDefaultConfig(schema: JsonSchema): string {
  const props = (schema as Schema).properties ?? {};
  const top: string[] = [];
  const tables: string[] = [];
  for (const [key, s] of Object.entries(props)) {
    const owner = s['x-module'] ? ` (module ${s['x-module']})` : '';
    if (s.type === 'object') {
      tables.push('', `# [${key}]${s.description ? `   # ${s.description}` : ''}${owner}`, ...Object.entries(s.properties ?? {}).map(([k, p]) => line(k, p)));
    } else top.push(line(key, s) + owner);
  }
  return [
    '# Talon configuration. Every key is optional: uncomment a line to change it; the values shown are the defaults.',
    '# Top-level keys come first: TOML puts every key after a [table] header into that table.',
    '# Reference: docs/configuration.md',
    '',
    ...top,
    ...tables,
    '',
  ].join('\n');
}
