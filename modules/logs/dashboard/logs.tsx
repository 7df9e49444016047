/**
 * Live logs: the latest lines (the stream's backlog) then the live ones, filtered by the service (level, module, text
 * or a followed request id), read with the key in a header; pausing ends the stream, resuming opens on the backlog
 * again, so nothing logged meanwhile is missed (within the backlog).
 */
import { useEffect, useState } from 'preact/hooks';
import { ErrorText, readSse, request } from '@talon/dashboard-kit';
import { parseRecord, type LogRecord } from './log-record.ts';
import { LogLine } from './log-line.tsx';

const KEEP = 500;
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
/** Typing settles before the stream is opened again. */
const TYPING_MS = 300;

function useSettled(value: string): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), TYPING_MS);
    return () => clearTimeout(timer);
  }, [value]);
  return settled;
}

function streamPath(level: string, module: string, q: string): string {
  const query = new URLSearchParams({ backlog: String(KEEP), level });
  if (module) query.set('module', module);
  if (q) query.set('q', q);
  return `/api/logs/stream?${query}`;
}

export default function LogsView() {
  const [lines, setLines] = useState<LogRecord[]>([]);
  const [level, setLevel] = useState('info');
  const [moduleInput, setModuleInput] = useState('');
  const [textInput, setTextInput] = useState('');
  const [reqId, setReqId] = useState('');
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<unknown>();
  const module = useSettled(moduleInput.trim());
  const text = useSettled(textInput.trim());
  // The service filters by one text: the followed request id when there is one, the text filter in the page then.
  const serverText = reqId || text;
  useEffect(() => {
    if (paused) return;
    const controller = new AbortController();
    let n = 0;
    setLines([]);
    setError(undefined);
    request(streamPath(level, module, serverText), { signal: controller.signal })
      .then((res) =>
        readSse(res, (e) => {
          if (e.event === 'log') setLines((l) => [...l.slice(-(KEEP - 1)), parseRecord(n++, e.data)]);
        }),
      )
      .catch((err: Error) => err.name !== 'AbortError' && setError(err));
    return () => controller.abort();
  }, [level, module, serverText, paused]);
  const needle = reqId && text ? text.toLowerCase() : '';
  const shown = needle ? lines.filter((l) => l.full.toLowerCase().includes(needle)) : lines;
  const modules = [...new Set(lines.map((l) => l.module).filter(Boolean))].sort();
  return (
    <section>
      <h1>Live logs</h1>
      <div class="toolbar">
        <label for="log-level">Lowest level</label>
        <select id="log-level" value={level} onChange={(e) => setLevel(e.currentTarget.value)}>
          {LEVELS.map((l) => (
            <option value={l}>{l}</option>
          ))}
        </select>
        <label for="log-module">Module</label>
        <input id="log-module" class="narrow" list="log-modules" value={moduleInput} onInput={(e) => setModuleInput(e.currentTarget.value)} />
        <datalist id="log-modules">
          {modules.map((m) => (
            <option value={m} />
          ))}
        </datalist>
        <label for="log-filter">Text</label>
        <input id="log-filter" type="search" value={textInput} onInput={(e) => setTextInput(e.currentTarget.value)} />
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={() => setLines([])}>
          Clear
        </button>
      </div>
      {reqId && (
        <p class="log-following">
          Following request <code>{reqId}</code>{' '}
          <button type="button" class="small" onClick={() => setReqId('')}>
            Stop following
          </button>
        </p>
      )}
      <ErrorText error={error} />
      <p class="muted">
        {shown.length} {shown.length === 1 ? 'line' : 'lines'} (the latest {KEEP} kept){paused ? ', paused' : ''}.
      </p>
      <ol class="log-lines" aria-label="Log lines">
        {shown.map((l) => (
          <LogLine key={l.n} line={l} onFollow={setReqId} />
        ))}
      </ol>
    </section>
  );
}
