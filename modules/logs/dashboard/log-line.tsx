/** One log line: what a person reads first, the request id to follow, and the whole record on demand (as text). */
import { useState } from 'preact/hooks';
import { fmtClock } from '@talon/dashboard-kit';
import type { LogRecord } from './log-record.ts';

export function LogLine({ line, onFollow }: { line: LogRecord; onFollow: (reqId: string) => void }) {
  const [open, setOpen] = useState(false);
  const failed = line.status !== undefined && line.status >= 400;
  return (
    <li class={`log-line log-${line.level}`}>
      <button
        type="button"
        class="log-expand link"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        aria-label={open ? 'Hide the record' : 'Show the whole record'}
      >
        {open ? '▾' : '▸'}
      </button>
      <span class="time">{line.time ? fmtClock(line.time) : ''}</span> <span class="level">{line.level}</span> <span class="module">{line.module}</span>{' '}
      {line.method && (
        <span class="request">
          {line.method} {line.url}
          {line.status !== undefined && <span class={failed ? 'status failed' : 'status'}> {line.status}</span>}
          {line.ms !== undefined && <span class="muted"> {line.ms} ms</span>}
        </span>
      )}{' '}
      <span class="msg">{line.msg}</span>
      {line.error && <span class="log-error-msg"> — {line.error}</span>}{' '}
      {line.reqId && (
        <button type="button" class="link req-id" title={line.reqId} aria-label={`Follow request ${line.reqId}`} onClick={() => onFollow(line.reqId!)}>
          {line.reqId.slice(0, 8)}
        </button>
      )}
      {open && <pre class="log-record">{line.full}</pre>}
    </li>
  );
}
