/** pino's numeric levels. */
export const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LevelName = keyof typeof LEVELS;

/** The numeric level of a pino JSON line, or undefined when the line is not one. */
export function lineLevel(line: string): number | undefined {
  // Cheap scan first: the stream carries every line the service logs.
  const m = /"level":(\d+)/.exec(line);
  return m ? Number(m[1]) : undefined;
}
