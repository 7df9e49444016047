import { defineModule } from '@talon/module-sdk';
import { providerKeys, secretVault } from '@talon/secrets';
import { SecretBox, secretKeyFile } from './services/box.ts';
import { KEYS_TOPIC, KeyStore } from './services/keys.ts';

export default defineModule({
  register(ctx) {
    const box = new SecretBox(secretKeyFile(ctx.home));
    const keys = new KeyStore(ctx.store, ctx.changes, box, ctx.log);
    ctx.provide(secretVault, box);
    ctx.provide(providerKeys, keys);
    return {
      async start() {
        // Another process of the home changed a key: read them again (heard from before the load, so no note is missed).
        ctx.changes.on(KEYS_TOPIC, () => keys.load());
        // A key that is not the database's stops start-up (a ConfigError) before anything is sealed with it.
        await box.verify(ctx.store);
        await keys.load();
      },
    };
  },
});
