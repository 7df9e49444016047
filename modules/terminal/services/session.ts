/** One terminal session: JSON frames over the WebSocket to and from a PTY. */
import type { WebSocket } from 'ws';
import type { Pty } from './pty.ts';

const MAX_INPUT = 64 * 1024;

type ClientFrame = { type: 'input'; data: string } | { type: 'resize'; cols: number; rows: number } | { type: 'close' };

function parse(raw: string): ClientFrame | string {
  let f: Record<string, unknown>;
  try {
    f = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return 'frames are JSON objects';
  }
  if (f.type === 'input') return typeof f.data === 'string' && f.data.length <= MAX_INPUT ? (f as ClientFrame) : 'input needs data: a string of at most 64 KiB';
  if (f.type === 'resize') {
    const ok =
      Number.isInteger(f.cols) &&
      Number.isInteger(f.rows) &&
      (f.cols as number) >= 1 &&
      (f.cols as number) <= 1000 &&
      (f.rows as number) >= 1 &&
      (f.rows as number) <= 500;
    return ok ? (f as ClientFrame) : 'resize needs integer cols 1-1000 and rows 1-500';
  }
  if (f.type === 'close') return f as ClientFrame;
  return `unknown frame type '${String(f.type)}' (input, resize, close)`;
}

export function runSession(
  socket: WebSocket,
  pty: Pty,
  o: { shell: string; idleMs: number; onEnd: (e: { code: number | null; signal: number | null; reason: string }) => void },
): void {
  const send = (frame: Record<string, unknown>) => socket.readyState === socket.OPEN && socket.send(JSON.stringify(frame));
  let ended = false;
  let idle: NodeJS.Timeout;
  const end = (reason: string, code: number | null = null, signal: number | null = null) => {
    if (ended) return;
    ended = true;
    clearTimeout(idle);
    o.onEnd({ code, signal, reason });
  };
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      send({ type: 'error', content: `idle for ${Math.round(o.idleMs / 1000)} s: closing` });
      pty.kill();
      socket.close(1000, 'idle timeout');
      end('idle timeout');
    }, o.idleMs);
  };
  touch();
  send({ type: 'started', shell: o.shell, pid: pty.pid });
  pty.onData((data) => {
    touch();
    send({ type: 'output', data });
  });
  pty.onExit(({ exitCode, signal }) => {
    send({ type: 'exit', code: exitCode, signal: signal ?? null });
    socket.close(1000, 'shell exited');
    end('shell exited', exitCode, signal ?? null);
  });
  socket.on('message', (raw) => {
    const frame = parse(String(raw));
    if (typeof frame === 'string') return send({ type: 'error', content: frame });
    touch();
    if (frame.type === 'input') pty.write(frame.data);
    else if (frame.type === 'resize') pty.resize(frame.cols, frame.rows);
    else {
      pty.kill();
      socket.close(1000, 'closed by client');
    }
  });
  socket.on('close', () => {
    if (!ended) pty.kill();
    end('connection closed');
  });
}
