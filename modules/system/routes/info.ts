import type { ModuleContext, Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { AuthStatus } from '@talon/auth';
import type { LlmService } from '@talon/llm';
import { uptimeSeconds } from '../services/uptime.ts';

export interface InfoPeers {
  agents(): AgentRegistry | undefined;
  auth(): AuthStatus | undefined;
  llm(): LlmService | undefined;
}

export const API_VERSION = 'v1';

export function infoRoutes(app: Routes, ctx: ModuleContext, peers: InfoPeers): void {
  app.get('/api/status', { schema: { summary: 'Kernel status' } }, async () => {
    const running = ctx.kernel.modules().filter((m) => m.state === 'running');
    const agents = peers.agents();
    const model = peers.llm()?.defaultModel();
    return {
      status: 'running',
      version: ctx.kernel.version,
      uptime_seconds: uptimeSeconds(ctx.kernel),
      agent_count: agents ? agents.list().length : 0,
      default_provider: model?.provider ?? null,
      default_model: model?.model ?? null,
      api_listen: ctx.kernel.listenAddress(),
      auth: peers.auth()?.keyRequired() ? 'bearer_token' : 'open',
      modules: running.map((m) => m.id),
      hot_reloads: ctx.kernel.reloadCount(),
    };
  });

  app.get('/api/version', { schema: { summary: 'Version info' } }, async () => ({
    name: 'talon',
    version: ctx.kernel.version,
    api_version: API_VERSION,
    node: process.version,
    platform: process.platform,
    arch: process.arch,
  }));

  app.get('/api/versions', { schema: { summary: 'API version discovery' } }, async () => ({
    current: API_VERSION,
    versions: [{ version: API_VERSION, status: 'stable', base_path: '/api' }],
    // Spec, Versioning 3: protocol endpoints carry no version; the chat-completions API lives under /v1.
    unversioned: ['/mcp', '/.well-known/agent.json', '/a2a', '/api/hooks'],
    openai_compatible: '/v1',
    openapi: '/api/openapi.json',
  }));

  app.get('/api/modules', { schema: { summary: 'Modules and their states' } }, async () => {
    const modules = ctx.kernel.modules().map((m) => ({
      id: m.id,
      version: m.version,
      description: m.description,
      state: m.state,
      ...(m.error ? { error: m.error } : {}),
      critical: m.critical,
      ...(m.lastReload ? { last_reload: m.lastReload } : {}),
      depends: m.depends,
      // What goes with it when it is switched off (and comes back with it).
      dependants: m.dependants,
      optional_depends: m.optionalDepends,
      third_party: m.thirdParty,
    }));
    return { modules, total: modules.length, running: modules.filter((m) => m.state === 'running').length };
  });

  app.post('/api/shutdown', { schema: { summary: 'Graceful shutdown' } }, async (request, reply) => {
    request.log.warn('shutdown requested over the API');
    // Shut down once this reply is on the wire; the kernel drains other requests.
    reply.raw.once('finish', () => ctx.kernel.shutdown('api'));
    return reply.header('connection', 'close').send({ status: 'shutting_down' });
  });
}
