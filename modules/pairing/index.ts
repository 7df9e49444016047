import { defineModule } from '@talon/module-sdk';
import { pairedDevices } from '@talon/pairing';
import { safeNet } from '@talon/tools';
import { pairingConfigSchema, type PairingConfig } from './config.ts';
import { Devices } from './services/devices.ts';
import { pushToAll } from './services/push.ts';
import { pairingRoutes } from './routes/pairing.ts';

export default defineModule<PairingConfig>({
  configSchema: pairingConfigSchema,
  register(ctx) {
    const devices = new Devices(ctx.db, () => ctx.config);
    ctx.provide(pairedDevices, {
      authenticate: (headers) => devices.authenticate(headers),
      notify: (note) => pushToAll(devices, ctx.config, () => ctx.use(safeNet), note),
    });
    return {
      routes: (app) => pairingRoutes(app, { devices, config: () => ctx.config, net: () => ctx.use(safeNet) }),
    };
  },
});
