import { defineModule } from '@talon/module-sdk';
import { netFetch } from '@talon/net';
import { createNet } from './services/net.ts';

export default defineModule({
  register(ctx) {
    ctx.provide(netFetch, createNet());
  },
});
