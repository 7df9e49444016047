import path from 'node:path';
import { ConfigError, defineModule } from '@talon/module-sdk';
import { agentEvents, agentRegistry, agentRunner } from '@talon/agents';
import { peerNetwork } from '@talon/peers';
import { peersConfigSchema, type PeersConfig } from './config.ts';
import { loadIdentity, type Identity } from './services/identity.ts';
import { Network } from './services/network.ts';
import { Pins, PINS_TOPIC } from './services/pins.ts';
import { peerRoutes } from './routes/peers.ts';

export default defineModule<PeersConfig>({
  configSchema: peersConfigSchema,
  register(ctx) {
    const c = ctx.config;
    if ((c.listen || c.connect.length) && !c.shared_secret) {
      throw new ConfigError('[peers] listen or connect is set without shared_secret: peer traffic is only accepted with a shared secret (16+ characters)');
    }
    const pins = new Pins(ctx.store, (t, nodeId) => ctx.changes.note(PINS_TOPIC, nodeId, t), ctx.log);
    // Another process sharing the home pinned a node: its pin is checked here too.
    ctx.changes.on(PINS_TOPIC, (nodeId) => pins.heard(nodeId));
    // Built in start(): the identity lives in files (no I/O in register).
    const state: { identity?: Identity; network?: Network } = {};
    ctx.provide(peerNetwork, {
      peers: () => state.network?.peers() ?? [],
      sendAgentMessage: (nodeId, agent, message, sender) => {
        if (!state.network) return Promise.reject(new Error('peers are not configured'));
        return state.network.sendAgentMessage(nodeId, agent, message, sender);
      },
    });
    ctx.events.of(agentEvents).subscribe(['agent.spawned', 'agent.terminated'], (event) => {
      state.network?.broadcast(event.type === 'agent.spawned' ? 'agent_spawned' : 'agent_terminated', { agent: (event.data as { name: string }).name });
    });
    // Peers added to or removed from [peers] connect at run time are dialled or dropped at once.
    ctx.hooks.kernel.config.changed.tapPromise('peers', async (change) => {
      if (change.path === '' || change.path.startsWith('peers')) state.network?.reconcile();
    });
    return {
      async start() {
        await pins.load();
        state.identity = loadIdentity(path.join(ctx.dataDir), { nodeId: ctx.config.node_id, nodeName: ctx.config.node_name });
        state.network = new Network({
          identity: state.identity,
          pins,
          config: () => ctx.config,
          agents: () => ctx.tryUse(agentRegistry),
          runner: () => ctx.use(agentRunner),
          log: ctx.log,
        });
        await state.network.start();
      },
      async stop() {
        await state.network?.stop();
        await pins.flush();
      },
      routes: (app) => peerRoutes(app, { network: () => state.network, identity: () => state.identity, pins, nodes: ctx.nodes, database: ctx.store.dialect }),
    };
  },
});
