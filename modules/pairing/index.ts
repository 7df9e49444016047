import { defineModule } from '@talon/module-sdk';
import { authHooks } from '@talon/auth';
import { pairedDevices } from '@talon/pairing';
import { netFetch } from '@talon/net';
import { pairingConfigSchema, type PairingConfig } from './config.ts';
import { Devices, DEVICES_TOPIC } from './services/devices.ts';
import { pushToAll } from './services/push.ts';
import { pairingRoutes } from './routes/pairing.ts';

export default defineModule<PairingConfig>({
  configSchema: pairingConfigSchema,
  register(ctx) {
    const devices = new Devices(
      ctx.store,
      () => ctx.config,
      (t, id) => ctx.changes.note(DEVICES_TOPIC, id, t),
      ctx.log,
    );
    // Another process paired or removed a device: its token works, or stops working, here too.
    ctx.changes.on(DEVICES_TOPIC, () => devices.load());
    ctx.provide(pairedDevices, {
      authenticate: (headers) => devices.authenticate(headers),
      notify: (note) => pushToAll(devices, ctx.config, () => ctx.use(netFetch), note),
    });
    // A device token admits a request while auth runs, as a user: auth keeps administration from it.
    ctx.hooks.tryTap(authHooks)?.authenticate.tap('device-token', (request) => {
      const device = devices.authenticate(request.headers);
      return device && { subject: device.subject, role: device.role };
    });
    return {
      start: () => devices.load(),
      stop: () => devices.flush(),
      routes: (app) => pairingRoutes(app, { devices, config: () => ctx.config, net: () => ctx.use(netFetch) }),
    };
  },
});
