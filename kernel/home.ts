import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TalonPaths } from '@talon/module-sdk';

/** $TALON_HOME, default ~/.talon. */
export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TALON_HOME?.trim();
  return path.resolve(fromEnv ? fromEnv.replace(/^~(?=$|\/)/, os.homedir()) : path.join(os.homedir(), '.talon'));
}

export function preparePaths(home: string): TalonPaths {
  const paths: TalonPaths = {
    home,
    data: path.join(home, 'data'),
    uploads: path.join(home, 'uploads'),
    checkpoints: path.join(home, 'checkpoints'),
    logs: path.join(home, 'logs'),
    workspaces: path.join(home, 'workspaces'),
  };
  for (const dir of Object.values(paths)) mkdirSync(dir, { recursive: true });
  return paths;
}
