import type { ToolFactory } from '../services/deps.ts';
import { writeFileAtomic } from '../services/atomic-write.ts';
import { fail, failFrom, ok, requiredString } from '../services/result.ts';
import { resolveInWorkspace } from '../services/workspace.ts';

export const fileWriteTool: ToolFactory = () => ({
  name: 'file_write',
  description: 'Write content to a file. Creates parent folders; replaces the file atomically. Paths are relative to the agent workspace.',
  aliases: ['Write', 'write', 'write_file', 'Edit', 'edit', 'fs-write', 'fs_write', 'fsWrite', 'writeFile'],
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'file path, relative to the workspace' },
      content: { type: 'string', description: 'the full new content of the file' },
    },
    required: ['path', 'content'],
  },
  async execute(input, ctx) {
    let file: string;
    try {
      file = resolveInWorkspace(ctx.workspace, requiredString(input, 'path', 'file_write'));
    } catch (err) {
      return failFrom(err);
    }
    if (typeof input.content !== 'string') return fail("file_write requires a 'content' string");
    try {
      const bytes = await writeFileAtomic(file, input.content);
      return ok(`Successfully wrote ${bytes} bytes to ${file}`);
    } catch (err) {
      return failFrom(err, `Failed to write '${String(input.path)}'`);
    }
  },
});
