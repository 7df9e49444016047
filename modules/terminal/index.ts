import { defineModule } from '@talon/module-sdk';
import { terminalEvents } from '@talon/terminal';
import { loadPty, type Pty } from './services/pty.ts';
import { terminalRoutes } from './routes/terminal.ts';
import { terminalConfigSchema, type TerminalConfig } from './config.ts';

export default defineModule<TerminalConfig>({
  configSchema: terminalConfigSchema,
  events: [terminalEvents],
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
          publish: (what, data) => ctx.events.of(terminalEvents).publish(`terminal.session_${what}`, data),
        }),
    };
  },
});
