import os from 'node:os';
import path from 'node:path';

/** $TALON_HOME, default ~/.talon. */
export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TALON_HOME?.trim();
  return path.resolve(fromEnv ? fromEnv.replace(/^~(?=$|\/)/, os.homedir()) : path.join(os.homedir(), '.talon'));
}
