import { LEVELS, lineLevel, type LevelName } from './level.ts';

export interface LineQuery {
  level?: LevelName;
  module?: string;
  q?: string;
}

/**
 * Which lines a stream sends. `module` matches the logging module (`module`) or, on an access line, the module whose
 * route answered (`routeModule`); `q` is a case-insensitive part of the JSON line (a request id, a word of the message).
 * Cheap checks first: a live stream runs this on every line the service logs.
 */
export function lineFilter(query: LineQuery): (line: string) => boolean {
  const min = query.level ? LEVELS[query.level] : 0;
  const q = query.q?.toLowerCase();
  const module = query.module;
  return (line) => {
    if (min && (lineLevel(line) ?? 0) < min) return false;
    if (q && !line.toLowerCase().includes(q)) return false;
    if (module && !line.includes(module)) return false;
    if (module) {
      const record = parse(line);
      if (record?.module !== module && record?.routeModule !== module) return false;
    }
    return true;
  };
}

function parse(line: string): { module?: unknown; routeModule?: unknown } | undefined {
  try {
    return JSON.parse(line) as { module?: unknown; routeModule?: unknown };
  } catch {
    return undefined;
  }
}
