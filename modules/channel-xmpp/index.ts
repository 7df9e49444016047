import { defineModule, lazy } from '@talon/module-sdk';
import { channelHooks, channelKit } from '@talon/channels';
import type * as XmppClient from '@xmpp/client';
import { xmppAdapter } from './services/adapter.ts';

/** Loaded when the channel starts: an unconfigured XMPP channel costs no client library (ESM only: imported). */
const xmpp = lazy((): Promise<typeof XmppClient> => import('@xmpp/client'));

export default defineModule({
  register(ctx) {
    const adapter = xmppAdapter(ctx.use(channelKit), xmpp);
    ctx.hooks.tap(channelHooks).adapters.tap('channel-xmpp', (list) => [...list, adapter]);
  },
});
