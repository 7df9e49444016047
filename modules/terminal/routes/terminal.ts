import os from 'node:os';
import { HttpError, forbidden, tooManyRequests, type FastifyRequest, type Routes } from '@talon/module-sdk';
import { runSession } from '../services/session.ts';
import type { Pty, loadPty } from '../services/pty.ts';

export interface TerminalConfig {
  enabled: boolean;
  allow_remote: boolean;
  shell: string;
  idle_timeout_secs: number;
  max_sessions: number;
  allowed_origins: string[];
}

export interface TerminalDeps {
  config: () => TerminalConfig;
  pty: () => ReturnType<typeof loadPty>;
  cwd: string;
  sessions: Set<Pty>;
  publish: (type: 'started' | 'ended', data: Record<string, unknown>) => void;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;
const shellOf = (c: TerminalConfig) => c.shell || process.env.SHELL || '/bin/sh';

/** Every reason to refuse a session, as the handshake's HTTP answer. */
function admit(request: FastifyRequest, d: TerminalDeps): void {
  const c = d.config();
  if (!c.enabled) throw forbidden('the terminal is off: set enabled = true in the [terminal] section of config.toml');
  const { reason } = d.pty();
  if (reason) throw new HttpError(501, reason);
  if (!LOOPBACK.test(request.ip) && !c.allow_remote) throw forbidden('the terminal serves loopback clients only ([terminal] allow_remote)');
  if (/[?&](token|api_key|key)=/.test(request.url))
    throw new HttpError(400, 'never put a key in the URL: use the Authorization header or the bearer.<key> subprotocol');
  // A web page on another origin must not reach a shell through the visitor's browser.
  const origin = request.headers.origin;
  if (origin && !c.allowed_origins.includes(origin) && new URL(origin).host !== request.headers.host)
    throw forbidden(`origin '${origin}' may not open a terminal`);
  if (!request.ws) throw new HttpError(426, 'this endpoint is a WebSocket: connect with an Upgrade: websocket request', { headers: { upgrade: 'websocket' } });
  if (d.sessions.size >= c.max_sessions) throw tooManyRequests(`${d.sessions.size} terminal sessions are open, the most [terminal] max_sessions allows`, 5);
}

export function terminalRoutes(app: Routes, d: TerminalDeps): void {
  app.get('/api/terminal/health', { schema: { summary: 'Terminal service health', tags: ['system'] } }, async () => {
    const c = d.config();
    const { reason } = d.pty();
    return {
      ok: c.enabled && !reason,
      enabled: c.enabled,
      pty_available: !reason,
      ...(reason ? { reason } : {}),
      shell: shellOf(c),
      os: process.platform,
      hostname: os.hostname(),
      loopback_only: !c.allow_remote,
      active_sessions: d.sessions.size,
      max_sessions: c.max_sessions,
      idle_timeout_secs: c.idle_timeout_secs,
    };
  });
  app.get(
    '/api/terminal/ws',
    {
      websocket: true,
      schema: { summary: 'Terminal WebSocket: a shell in a PTY (input, resize, close / started, output, exit, error frames)', tags: ['system'] },
      preValidation: async (request) => admit(request, d),
    },
    (socket, request) => {
      const c = d.config();
      const shell = shellOf(c);
      const pty = d.pty().pty!.spawn(shell, [], { name: 'xterm-256color', cols: 80, rows: 24, cwd: d.cwd, env: process.env });
      d.sessions.add(pty);
      const started = Date.now();
      d.publish('started', { pid: pty.pid, shell, ip: request.ip, request_id: request.id });
      runSession(socket, pty, {
        shell,
        idleMs: c.idle_timeout_secs * 1000,
        onEnd: (e) => {
          d.sessions.delete(pty);
          d.publish('ended', { pid: pty.pid, ...e, duration_ms: Date.now() - started });
        },
      });
    },
  );
}
