import { defineModule } from '@talon/module-sdk';
import { agentRegistry } from '@talon/agents';
import { authStatus } from '@talon/auth';
import { llmService } from '@talon/llm';
import { healthRoutes } from './routes/health.ts';
import { infoRoutes } from './routes/info.ts';
import { openApiRoutes } from './routes/openapi.ts';

export default defineModule({
  register(ctx) {
    // All optional: without agents there is nothing to count, without auth the API is open.
    const peers = { agents: () => ctx.tryUse(agentRegistry), auth: () => ctx.tryUse(authStatus), llm: () => ctx.tryUse(llmService) };
    return {
      routes(app) {
        healthRoutes(app, ctx);
        infoRoutes(app, ctx, peers);
        openApiRoutes(app, ctx, peers.auth);
      },
    };
  },
});
