/** Everything the routes need, built once per module copy in register(). */
import type { ModuleContext } from '@talon/module-sdk';
import type { SessionStore } from '@talon/agents';
import type { AgentsConfig } from '../config.ts';
import type { AgentStore } from './registry.ts';
import type { SessionService } from './sessions.ts';
import type { Runner } from './runner.ts';
import type { UploadStore } from './uploads.ts';
import type { TraceStore } from './traces.ts';
import type { AgentViews } from './views.ts';
import type { SessionLeases } from './leases.ts';
import type { Relay } from './relay.ts';

export interface AgentServices {
  ctx: ModuleContext<AgentsConfig>;
  registry: AgentStore;
  sessions: SessionService;
  sessionStore: SessionStore;
  runner: Runner;
  uploads: UploadStore;
  traces: TraceStore;
  views: AgentViews;
  leases: SessionLeases;
  relay: Relay;
}
