import { defineModule, lazy } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import { whatsappHooks } from '@talon/channel-whatsapp';
import { mediaService } from '@talon/media';
import { secretVault } from '@talon/secrets';
import { whatsappAdapter } from './services/adapter.ts';
import type { WhatsAppEndpoint } from './services/webhook.ts';
import { webhookRoutes } from './routes/webhook.ts';
import { AuthStore } from './services/web/auth.ts';
import { baileysFactory, loadCodec } from './services/web/baileys.ts';

export default defineModule({
  hooks: [whatsappHooks],
  register(ctx) {
    // The running webhook receiver, for the route: in this copy's closure, so a reload swaps both together.
    const endpoint: WhatsAppEndpoint = {};
    // Web mode's auth store, made (and Baileys loaded for its codec) only once a channel runs in web mode: one per
    // module copy, so a QR sign-in and the running connection share its generations (auth.ts).
    const codec = lazy(loadCodec);
    const auth = lazy(async () => new AuthStore('whatsapp', { store: () => ctx.store, vault: () => ctx.use(secretVault), codec: await codec(), log: ctx.log }));
    // The kit is read when the channel starts, so a reload of the channels module hands over its new copy.
    const adapter = whatsappAdapter(() => ctx.use(channelKit), endpoint, {
      codec,
      auth,
      // Read at each socket: Baileys unless a tap puts another transport (the tests' fake socket) in its place.
      factory: () => ctx.hooks.get(whatsappHooks).socketFactory.call(baileysFactory),
      toOpus: () => {
        const media = ctx.tryUse(mediaService);
        return media && ((bytes: Buffer) => media.convertAudio(bytes, 'opus'));
      },
    });
    ctx.hooks.tap(channelHooks).adapters.tap('channel-whatsapp', (list) => [...list, adapter]);
    return { routes: (app) => webhookRoutes(app, endpoint) };
  },
});
