import { defineModule, type FromSchema } from '@talon/module-sdk';
import { loadPty, type Pty } from './services/pty.ts';
import { terminalRoutes } from './routes/terminal.ts';

const configSchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean', default: false, description: 'offer a shell over GET /api/terminal/ws (it runs as the service user)' },
    allow_remote: { type: 'boolean', default: false, description: 'also serve clients that are not on loopback' },
    shell: { type: 'string', default: '', description: 'the shell to run; empty: $SHELL, else /bin/sh' },
    idle_timeout_secs: { type: 'integer', minimum: 1, maximum: 86400, default: 1800, description: 'a session without input or output this long is closed' },
    max_sessions: { type: 'integer', minimum: 1, maximum: 64, default: 4, description: 'sessions open at once' },
    allowed_origins: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'browser origins besides the service itself that may open a terminal',
    },
  },
  additionalProperties: false,
} as const;
type Config = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: false }>;

declare module '@talon/module-sdk' {
  interface TalonEvents {
    'terminal.session_started': Record<string, unknown>;
    'terminal.session_ended': Record<string, unknown>;
  }
}

export default defineModule<Config>({
  configSchema,
  register(ctx) {
    let loaded: ReturnType<typeof loadPty> | undefined;
    const pty = () => (loaded ??= loadPty(ctx.dir));
    const sessions = new Set<Pty>();
    const closeAll = () => {
      for (const p of sessions) p.kill();
      sessions.clear();
    };
    ctx.onStop(closeAll);
    return {
      routes: (app) =>
        terminalRoutes(app, {
          config: () => ctx.config,
          pty,
          cwd: ctx.home,
          sessions,
          publish: (what, data) => ctx.events.publish(`terminal.session_${what}`, data),
        }),
    };
  },
});
