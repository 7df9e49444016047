/**
 * The checkpoint commit message (docs/checkpoints.md):
 *
 *   checkpoint: file_write src/app.ts
 *
 *   Agent-Id: <agent uuid>
 *   Session-Id: <session uuid>
 *   Tool: file_write
 *   Path: src/app.ts
 *
 * The subject reads well in `git log --oneline`; the trailers are what
 * `git interpret-trailers` and the listing endpoint parse.
 */

export interface CheckpointMeta {
  /** file_write, apply_patch, or restore for the safety snapshot taken before a restore. */
  tool: string;
  agentId?: string;
  sessionId?: string;
  /** Target paths of the call, relative to the working directory. */
  paths: readonly string[];
  /** Full id of the commit a restore is about to bring back (safety snapshots only). */
  restoreOf?: string;
}

export interface CheckpointEntry {
  commit: string;
  short: string;
  message: string;
  agent_id: string | null;
  session_id: string | null;
  tool: string | null;
  path: string | null;
  /** Commit time, ISO 8601 UTC. */
  timestamp: string;
}

const PREVIEW_CHARS = 100;
const TRAILERS = ['Agent-Id', 'Session-Id', 'Tool', 'Path'] as const;

/** One line, no control characters: a path may hold anything but must not break the message format. */
const oneLine = (text: string): string => text.replace(/[\u0000-\u001f\u007f]/g, '?');

/** The first target, cut from the left (the file name is the telling end) to 100 characters, plus a count of the others. */
export function pathPreview(paths: readonly string[]): string {
  const first = oneLine(paths[0] ?? '');
  const head = first.length > PREVIEW_CHARS ? `…${first.slice(-(PREVIEW_CHARS - 1))}` : first;
  return paths.length > 1 ? `${head} (+${paths.length - 1} more)` : head;
}

export function checkpointMessage(meta: CheckpointMeta): string {
  const preview = pathPreview(meta.paths);
  const subject = meta.restoreOf ? `checkpoint: before restore of ${meta.restoreOf.slice(0, 12)}` : `checkpoint: ${oneLine(meta.tool)} ${preview}`.trimEnd();
  const trailers = [
    meta.agentId && `Agent-Id: ${oneLine(meta.agentId)}`,
    meta.sessionId && `Session-Id: ${oneLine(meta.sessionId)}`,
    `Tool: ${oneLine(meta.tool)}`,
    preview && `Path: ${preview}`,
    meta.restoreOf && `Restore-Of: ${meta.restoreOf}`,
  ].filter(Boolean);
  return `${subject}\n\n${trailers.join('\n')}\n`;
}

const FIELD = '%x1f';
const RECORD = '%x1e';

/** `git log --format` that yields one record per commit for parseLog. */
export const LOG_FORMAT = ['%H', '%h', '%ct', '%s', ...TRAILERS.map((key) => `%(trailers:key=${key},valueonly,separator=%x2C)`)].join(FIELD) + RECORD;

export function parseLog(output: string): CheckpointEntry[] {
  return output
    .split('\x1e')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record.length > 0)
    .map((record) => {
      const [commit, short, seconds, message, agentId, sessionId, tool, path] = record.split('\x1f');
      const orNull = (value: string | undefined) => (value ? value.trim() || null : null);
      return {
        commit,
        short,
        message,
        agent_id: orNull(agentId),
        session_id: orNull(sessionId),
        tool: orNull(tool),
        path: orNull(path),
        timestamp: new Date(Number(seconds) * 1000).toISOString(),
      };
    });
}
