import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { securityHooks } from '@talon/security';
import { taintEvents } from '@talon/taint';
import { SINKS, taintConfigSchema, type TaintConfig } from './config.ts';
import { TaintTracker } from './services/tracker.ts';

export default defineModule<TaintConfig>({
  configSchema: taintConfigSchema,
  events: [taintEvents],
  register(ctx) {
    const tracker = new TaintTracker(() => ctx.config, ctx.events.of(taintEvents), ctx.log);
    const hooks = ctx.hooks.tap(agentHooks);
    hooks.messageReceived.tap('taint-origin', (turn) => tracker.beginTurn(turn));
    hooks.authorizeToolCall.tap('taint-sinks', (call) => tracker.authorize(call));
    hooks.toolResult.tap('taint-sources', (output, call) => tracker.result(output, call));
    hooks.afterTurn.tap('taint-forget', (turn) => tracker.endTurn(turn.turnId));
    // A policy with every sink "off" checks nothing: the system is off although the module runs.
    ctx.hooks
      .tryTap(securityHooks)
      ?.systemStates.tap('taint', (states) => (SINKS.every((sink) => ctx.config.sinks[sink] === 'off') ? { ...states, taint_tracking: 'inactive' } : states));
    return {};
  },
});
