import { AsyncLocalStorage } from 'node:async_hooks';
import { defineModule, STAGE } from '@talon/module-sdk';
import { agentHooks, agentRegistry, agentRunner, agentTools } from '@talon/agents';
import { secretVault } from '@talon/secrets';
import { pairedDevices } from '@talon/pairing';
import { approvalEvents, approvalService } from '@talon/approvals';
import { inboxHooks } from '@talon/inbox';
import { approvalConfigSchema, type ApprovalConfig } from './config.ts';
import { Approvals, REQUESTS_TOPIC } from './services/approvals.ts';
import { devicePush } from './services/notify.ts';
import { gateToolCall, resumer, type ApprovedRun, type GateDeps } from './services/gate.ts';
import { ApprovalStore } from './services/store.ts';
import { Totp } from './services/totp.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { totpRoutes } from './routes/totp.ts';

/** Expiry is checked this often; a request expires at most this late. */
const SWEEP_MS = 1000;

export default defineModule<ApprovalConfig>({
  configSchema: approvalConfigSchema,
  events: [approvalEvents],
  register(ctx) {
    const events = ctx.events.of(approvalEvents);
    const store = new ApprovalStore(ctx.store);
    const totp = new Totp(
      ctx.store,
      () => ctx.use(secretVault),
      () => ctx.config.totp_issuer,
    );
    const approved: ApprovedRun = new AsyncLocalStorage();
    const gateDeps: GateDeps = {
      approvals: () => approvals,
      config: () => ctx.config,
      tools: () => ctx.use(agentTools),
      runner: () => ctx.use(agentRunner),
      log: ctx.log,
    };
    const approvals = new Approvals({
      store,
      totp,
      config: () => ctx.config,
      events,
      notify: devicePush(
        () => ctx.tryUse(pairedDevices),
        () => ctx.config.notify_devices,
      ),
      onOutcome: resumer(gateDeps, approved),
      log: ctx.log,
      node: ctx.nodes.id,
      noteChange: (t, id) => ctx.changes.note(REQUESTS_TOPIC, id, t),
    });
    // A request another process made or decided: the pending count follows; a held call of this node resumes.
    ctx.changes.on(REQUESTS_TOPIC, (id) => approvals.heard(id));
    // A dead process's held calls: this one (or another live one, one claim wins) resumes them after their decision.
    ctx.nodes.onDead((dead) => approvals.adopt({ dead }));
    ctx.provide(approvalService, approvals);
    ctx.hooks.tryTap(inboxHooks)?.sources.tap('approvals', (list) => [...list, { name: 'approvals', pending: () => approvals.pendingCount() }]);
    // A guard: it runs before other authorizeToolCall taps so nothing else sees a call that is held.
    ctx.hooks.tap(agentHooks).authorizeToolCall.tapPromise('approval', gateToolCall(gateDeps, approved), { stage: STAGE.GUARD });
    return {
      async start() {
        await approvals.load();
        await approvals.adopt({ notLive: await ctx.nodes.live() });
        await approvals.sweep();
        ctx.setInterval(() => approvals.sweep(), SWEEP_MS);
      },
      routes(app) {
        approvalRoutes(app, { approvals, store, agents: () => ctx.use(agentRegistry), events });
        totpRoutes(app, totp, () => ctx.config.second_factor === 'totp');
      },
    };
  },
});
