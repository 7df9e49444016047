import { readdir } from 'node:fs/promises';
import type { ToolFactory } from '../services/deps.ts';
import { fail, failFrom, ok, optionalInt } from '../services/result.ts';
import { resolveInWorkspace } from '../services/workspace.ts';

const DEFAULT_LIMIT = 1000;

export const fileListTool: ToolFactory = () => ({
  name: 'file_list',
  description: 'List files in a directory of the agent workspace (directories end with "/").',
  aliases: ['Glob', 'glob', 'Grep', 'grep', 'list_files', 'list_dir', 'ls', 'fs-list', 'fs_list', 'fsList', 'listFiles'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'directory, relative to the workspace ("." for its root)' },
      limit: { type: 'integer', minimum: 1, description: `entries to show (default ${DEFAULT_LIMIT})` },
      offset: { type: 'integer', minimum: 0, description: 'entries to skip' },
    },
    required: ['path'],
  },
  async execute(input, ctx) {
    if (typeof input.path !== 'string' || input.path.trim() === '')
      return fail('file_list requires a \'path\' argument; use {"path": "."} for the workspace root');
    try {
      const dir = resolveInWorkspace(ctx.workspace, input.path);
      const limit = optionalInt(input, 'limit') || DEFAULT_LIMIT;
      const offset = optionalInt(input, 'offset') ?? 0;
      const entries = (await readdir(dir, { withFileTypes: true })).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      const shown = entries.slice(offset, offset + limit);
      const limited = offset > 0 || shown.length < entries.length;
      const footer = limited ? `\n--- showing ${shown.length} of ${entries.length} entries (offset: ${offset}) ---` : '';
      return ok(shown.join('\n') + footer);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return fail(`Directory not found: ${input.path}`);
      if (code === 'ENOTDIR') return fail(`'${input.path}' is not a directory`);
      return failFrom(err);
    }
  },
});
