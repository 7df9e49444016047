import { readFile, rm, stat } from 'node:fs/promises';
import type { ToolFactory } from '../services/deps.ts';
import { writeFileAtomic } from '../services/atomic-write.ts';
import { applyHunks, parsePatch, PatchError, type PatchOp } from '../services/patch.ts';
import { fail, failFrom, ok } from '../services/result.ts';
import { resolveInWorkspace } from '../services/workspace.ts';

interface Counts {
  added: number;
  updated: number;
  deleted: number;
  moved: number;
}

function summary(c: Counts): string {
  const parts = [c.added && `${c.added} added`, c.updated && `${c.updated} updated`, c.deleted && `${c.deleted} deleted`, c.moved && `${c.moved} moved`].filter(
    Boolean,
  );
  return parts.length ? parts.join(', ') : 'No changes applied';
}

const errorText = (err: unknown) => ((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message);

async function applyOp(op: PatchOp, workspace: string, counts: Counts): Promise<void> {
  const file = resolveInWorkspace(workspace, op.path);
  if (op.kind === 'add') {
    await writeFileAtomic(file, op.content);
    counts.added++;
    return;
  }
  if (op.kind === 'delete') {
    try {
      if ((await stat(file)).isDirectory()) throw new PatchError(`Delete File '${op.path}': is a directory`);
    } catch (err) {
      if (err instanceof PatchError) throw err;
      throw new PatchError(`Delete File '${op.path}': ${errorText(err)}`);
    }
    await rm(file);
    counts.deleted++;
    return;
  }
  let original: string;
  try {
    original = await readFile(file, 'utf8');
  } catch (err) {
    throw new PatchError(`Update File '${op.path}': ${errorText(err)}`);
  }
  let updated: string;
  try {
    updated = applyHunks(original, op.hunks);
  } catch (err) {
    throw new PatchError(`Update File '${op.path}': ${(err as Error).message}`);
  }
  if (op.moveTo) {
    const target = resolveInWorkspace(workspace, op.moveTo);
    await writeFileAtomic(target, updated);
    if (target !== file) await rm(file);
    counts.moved++;
  } else {
    await writeFileAtomic(file, updated);
    counts.updated++;
  }
}

export const applyPatchTool: ToolFactory = () => ({
  name: 'apply_patch',
  description:
    "Apply a multi-hunk diff patch to add, update, move, or delete files. Format: '*** Begin Patch', then '*** Add File: <path>' (lines prefixed '+'), " +
    "'*** Update File: <path>' (or '<old> -> <new>' to move) with '@@' hunks of ' ' context, '-' removed and '+' added lines, '*** Delete File: <path>', and '*** End Patch'.",
  source: 'builtin',
  inputSchema: {
    type: 'object',
    properties: { patch: { type: 'string', description: 'the patch text, from *** Begin Patch to *** End Patch' } },
    required: ['patch'],
  },
  async execute(input, ctx) {
    if (typeof input.patch !== 'string') return fail("apply_patch requires a 'patch' string");
    if (!ctx.workspace) return fail('apply_patch needs an agent workspace directory, and none is available');
    let ops: PatchOp[];
    try {
      ops = parsePatch(input.patch);
    } catch (err) {
      return failFrom(err);
    }
    const counts: Counts = { added: 0, updated: 0, deleted: 0, moved: 0 };
    const errors: string[] = [];
    for (const op of ops) {
      try {
        await applyOp(op, ctx.workspace, counts);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    if (errors.length) return fail(`Patch partially applied: ${summary(counts)}. Errors: ${errors.join('; ')}`);
    return ok(summary(counts));
  },
});
