/** Live logs: the service's log stream (SSE, read with the key in a header), filterable, the last 500 lines kept. */
import { useEffect, useState } from 'preact/hooks';
import { ErrorText, fmtClock, readSse, request } from '@talon/dashboard-kit';

const KEEP = 500;
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

interface Line {
  n: number;
  time: string;
  level: string;
  module: string;
  msg: string;
  raw: string;
}

function parse(n: number, raw: string): Line {
  try {
    const j = JSON.parse(raw) as { time?: number | string; level?: number | string; module?: string; msg?: string };
    const level = typeof j.level === 'number' ? (LEVEL_NAMES[j.level] ?? String(j.level)) : String(j.level ?? '');
    return { n, time: j.time ? fmtClock(new Date(j.time)) : '', level, module: j.module ?? '', msg: j.msg ?? '', raw };
  } catch {
    return { n, time: '', level: '', module: '', msg: raw, raw };
  }
}

export default function LogsView() {
  const [lines, setLines] = useState<Line[]>([]);
  const [level, setLevel] = useState('info');
  const [filter, setFilter] = useState('');
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (paused) return;
    const controller = new AbortController();
    let n = 0;
    request(`/api/logs/stream?level=${level}`, { signal: controller.signal })
      .then((res) =>
        readSse(res, (e) => {
          if (e.event === 'log') setLines((l) => [...l.slice(-(KEEP - 1)), parse(n++, e.data)]);
        }),
      )
      .catch((err: Error) => err.name !== 'AbortError' && setError(err));
    return () => controller.abort();
  }, [level, paused]);
  const shown = filter ? lines.filter((l) => l.raw.toLowerCase().includes(filter.toLowerCase())) : lines;
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
        <label for="log-filter">Filter</label>
        <input id="log-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        <button type="button" onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={() => setLines([])}>
          Clear
        </button>
      </div>
      <ErrorText error={error} />
      <p class="muted">
        {shown.length} of the last {KEEP} lines{paused ? ' (paused)' : ''}.
      </p>
      <ol class="log-lines" aria-label="Log lines">
        {shown.map((l) => (
          <li key={l.n} class={`log-${l.level}`}>
            <span class="time">{l.time}</span> <span class="level">{l.level}</span> <span class="module">{l.module}</span> {l.msg}
          </li>
        ))}
      </ol>
    </section>
  );
}
