import { readFile, stat } from 'node:fs/promises';
import type { ToolFactory } from '../services/deps.ts';
import { fail, failFrom, ok, optionalInt, requiredString } from '../services/result.ts';
import { resolveInWorkspace } from '../services/workspace.ts';

const DEFAULT_MAX = 10 * 1024 * 1024;
const HARD_MAX = 128 * 1024 * 1024;

export const fileReadTool: ToolFactory = () => ({
  name: 'file_read',
  description: 'Read the contents of a file. Paths are relative to the agent workspace.',
  aliases: ['Read', 'read', 'read_file', 'fs-read', 'fs_read', 'fsRead', 'readFile'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'file path, relative to the workspace' },
      max_bytes: { type: 'integer', minimum: 1, maximum: HARD_MAX, description: 'refuse files larger than this (default 10 MiB)' },
    },
    required: ['path'],
  },
  async execute(input, ctx) {
    let file: string;
    let requested: string;
    try {
      requested = requiredString(input, 'path', 'file_read');
      file = resolveInWorkspace(ctx.workspace, requested);
    } catch (err) {
      return failFrom(err);
    }
    try {
      const max = Math.min(optionalInt(input, 'max_bytes') ?? DEFAULT_MAX, HARD_MAX);
      const info = await stat(file);
      if (info.isDirectory()) return fail(`'${requested}' is a directory; use file_list`);
      if (info.size > max) return fail(`File '${requested}' is ${info.size} bytes, larger than max_bytes (${max})`);
      const data = await readFile(file);
      try {
        return ok(new TextDecoder('utf-8', { fatal: true }).decode(data));
      } catch {
        return fail(`File '${requested}' is not valid UTF-8 text`);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fail(`File not found: ${requested}`);
      return failFrom(err, `Failed to read '${requested}'`);
    }
  },
});
