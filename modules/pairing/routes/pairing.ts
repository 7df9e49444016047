import { notFound, requireUuid, type FastifyRequest, type Routes } from '@talon/module-sdk';
import type { NetFetch } from '@talon/net';
import type { PairingConfig } from '../config.ts';
import { deviceView, type Devices } from '../services/devices.ts';
import { notifyDevices } from '../services/push.ts';

const tags = ['pairing'];
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;

const completeBody = {
  type: 'object',
  properties: {
    pairing_code: { type: 'string', minLength: 1, maxLength: 128, description: 'the code from POST /api/pairing/request (also accepted as "token")' },
    token: { type: 'string', minLength: 1, maxLength: 128 },
    display_name: { type: 'string', minLength: 1, maxLength: 128, default: 'unknown' },
    platform: { type: 'string', minLength: 1, maxLength: 64, default: 'unknown' },
    push_token: { type: 'string', minLength: 1, maxLength: 256, description: 'the ntfy topic of this device' },
  },
  anyOf: [{ required: ['pairing_code'] }, { required: ['token'] }],
  additionalProperties: false,
} as const;

const notifyBody = {
  type: 'object',
  properties: { message: { type: 'string', minLength: 1, maxLength: 4096 }, title: { type: 'string', minLength: 1, maxLength: 256, default: 'Talon' } },
  required: ['message'],
  additionalProperties: false,
} as const;

export interface PairingRouteDeps {
  devices: Devices;
  config: () => PairingConfig;
  net: () => NetFetch;
}

function baseUrl(config: PairingConfig, request: FastifyRequest): string {
  return config.public_base_url.replace(/\/+$/, '') || `${request.protocol}://${request.headers.host ?? request.hostname}`;
}

export function pairingRoutes(app: Routes, deps: PairingRouteDeps): void {
  app.addHook('onRequest', async () => {
    if (!deps.config().enabled) throw notFound('pairing is not enabled: set [pairing] enabled = true');
  });

  app.post('/api/pairing/request', { schema: { summary: 'A single-use pairing code (and a QR code of it) for a new device', tags } }, async (request) => {
    const code = await deps.devices.newCode();
    const payload = Buffer.from(
      JSON.stringify({ v: 1, base_url: baseUrl(deps.config(), request), code: code.pairing_code, expires_at: code.expires_at }),
    ).toString('base64url');
    const qr_uri = `talon://pair?payload=${payload}`;
    // Loaded with the first pairing, not at start-up.
    const { default: QRCode } = await import('qrcode');
    return { ...code, qr_uri, qr_code: await QRCode.toDataURL(qr_uri) };
  });

  app.post(
    '/api/pairing/complete',
    { config: { public: true }, schema: { summary: 'Completes pairing with the code; the device token is shown once', tags, body: completeBody } },
    async (request) => {
      const { pairing_code, token, display_name, platform, push_token } = request.body;
      const { device, token: deviceToken } = await deps.devices.complete({ code: (pairing_code ?? token)!, display_name, platform, push_token });
      request.log.info({ device: device.id, platform }, 'device paired');
      return { ...deviceView(device), token: deviceToken };
    },
  );

  app.get('/api/pairing/devices', { schema: { summary: 'Paired devices', tags } }, async () => {
    const devices = (await deps.devices.list()).map(deviceView);
    return { devices, total: devices.length };
  });

  app.delete(
    '/api/pairing/devices/:id',
    { schema: { summary: 'Removes a device; its token stops working at once', tags, params: idParams } },
    async (request, reply) => {
      await deps.devices.remove(requireUuid(request.params.id, 'device id'));
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/pairing/notify',
    { schema: { summary: 'Pushes a notification to every paired device (ntfy or Gotify)', tags, body: notifyBody } },
    async (request) => {
      const devices = await deps.devices.list();
      const result = await notifyDevices(deps.net(), deps.config(), devices, { title: request.body.title, message: request.body.message });
      return { ok: result.failed === 0, ...result, devices: devices.length };
    },
  );
}
