import { defineModule } from '@talon/module-sdk';
import { authHooks } from '@talon/auth';
import { secretVault } from '@talon/secrets';
import { dashboardSessions } from '@talon/oidc';
import { netFetch } from '@talon/net';
import { oidcConfigSchema, type OidcConfig } from './config.ts';
import { Flows } from './services/flows.ts';
import { PendingSignIns } from './services/pending.ts';
import { Introspector } from './services/introspect.ts';
import { Providers } from './services/providers.ts';
import { Sessions, SESSIONS_TOPIC } from './services/sessions.ts';
import { authRoutes } from './routes/auth.ts';

export default defineModule<OidcConfig>({
  configSchema: oidcConfigSchema,
  register(ctx) {
    const config = () => ctx.config;
    const providers = new Providers(config, () => ctx.use(netFetch));
    const sessions = new Sessions(
      ctx.store,
      config,
      () => ctx.use(secretVault),
      (t, hash) => ctx.changes.note(SESSIONS_TOPIC, hash, t),
    );
    // Another process signed someone in or out: the cookie works, or stops working, here too.
    ctx.changes.on(SESSIONS_TOPIC, (hash) => sessions.heard(hash));
    // In the database, not in memory: the provider may send the browser back to another process or node.
    const flows = new Flows(new PendingSignIns(ctx.store), providers, config);
    const introspector = new Introspector(providers, sessions);
    ctx.provide(dashboardSessions, sessions);
    // The session cookie admits a request while auth runs; auth owns what an administrator's cookie may change.
    ctx.hooks.tryTap(authHooks)?.authenticate.tap('session-cookie', (request) => {
      const session = sessions.authenticate(request.headers);
      return session && { subject: session.subject, role: session.role, cookie: true };
    });
    for (const p of ctx.config.providers) {
      if (!p.allowed_domains.length)
        ctx.log.warn({ provider: p.id }, 'every account of this identity provider may sign in: set allowed_domains to restrict it');
    }
    return {
      start: () => sessions.load(),
      routes: (app) => authRoutes(app, { config, providers, flows, sessions, introspector }),
    };
  },
});
