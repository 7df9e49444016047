import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { manifestEvents, manifestSigner } from '@talon/manifest-signing';
import { securityHooks } from '@talon/security';
import { signingConfigSchema, type SigningConfig } from './config.ts';
import { loadOrCreateIdentity, type NodeIdentity } from './services/identity.ts';
import { Signer } from './services/signer.ts';
import { checkSpawn } from './services/spawn.ts';
import { signingRoutes } from './routes/signing.ts';

export default defineModule<SigningConfig>({
  configSchema: signingConfigSchema,
  events: [manifestEvents],
  register(ctx) {
    // The key is read (or made) in start(): a broken key file stops start-up (a security module never fails open).
    let identity: NodeIdentity | undefined;
    const id = () => {
      if (!identity) throw new Error('manifest-signing: the node identity is not loaded yet');
      return identity;
    };
    const signer = new Signer(id, () => ctx.config);
    const events = ctx.events.of(manifestEvents);
    ctx.provide(manifestSigner, signer);
    // On once the node key is loaded: until then nothing can be signed or checked.
    ctx.hooks.tryTap(securityHooks)?.systemStates.tap('manifest-signing', (states) => (identity ? states : { ...states, manifest_signing: 'inactive' }));
    ctx.hooks.tryTap(agentHooks)?.authorizeSpawn.tap('manifest-signature', (request) => checkSpawn(request, signer, ctx.config, events));
    return {
      start() {
        identity = loadOrCreateIdentity(path.join(ctx.home, 'identity'));
        ctx.log.info({ public_key: identity.publicHex }, 'node identity ready');
      },
      routes: (app) => signingRoutes(app, () => signer),
    };
  },
});
