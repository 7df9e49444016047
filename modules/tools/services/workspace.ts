/**
 * Resolves a tool's path argument inside the agent's workspace. Relative
 * paths go through the SDK's safeJoin (no '..', no symlink escapes); an
 * absolute path is accepted only when it already lies inside the workspace.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { badRequest, isInside, safeJoin } from '@talon/module-sdk';

export function resolveInWorkspace(workspace: string, requested: string): string {
  if (!workspace) throw badRequest('this tool needs an agent workspace directory, and none is available');
  if (typeof requested !== 'string' || requested.trim() === '') throw badRequest('path must be a non-empty string');
  let relative = requested;
  if (path.isAbsolute(requested)) {
    const roots = [path.resolve(workspace), realpathSync(workspace)];
    const root = roots.find((r) => isInside(r, path.resolve(requested)));
    if (!root) throw badRequest(`path '${requested}' is outside the agent workspace`);
    relative = path.relative(root, path.resolve(requested)) || '.';
  }
  return safeJoin(workspace, relative);
}
