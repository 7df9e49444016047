import { defineModule } from '@talon/module-sdk';
import { loadPty, type Pty } from './services/pty.ts';
import { terminalRoutes } from './routes/terminal.ts';
import { terminalConfigSchema, type TerminalConfig } from './config.ts';

declare module '@talon/module-sdk' {
  interface TalonEvents {
    'terminal.session_started': Record<string, unknown>;
    'terminal.session_ended': Record<string, unknown>;
  }
}

export default defineModule<TerminalConfig>({
  configSchema: terminalConfigSchema,
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
