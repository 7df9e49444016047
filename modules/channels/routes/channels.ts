/**
 * The spec's channel routes: list, detail, configure (POST/DELETE), test, reload, QR sign-in, and the older
 * listing's enable/disable. Secrets go to the vault and are never echoed (`has_token` says whether one is set).
 */
import { badRequest, conflict, HttpError, notFound, type Routes } from '@talon/module-sdk';
import type { QrSession } from '@talon/channels';
import type { ChannelsParts } from '../services/channels.ts';
import { fieldProblem } from '../services/fields.ts';
import { COMMON_FIELDS, secretNames } from '../services/settings.ts';
import type { Running } from '../services/runtime.ts';

const tags = ['channels'];
const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['name'] } as const;
const configureBody = {
  type: 'object',
  properties: {
    token: { type: 'string', minLength: 1, maxLength: 8192, description: 'the primary secret (bot token, password, signing secret)' },
    agent_name: { type: 'string', minLength: 1, maxLength: 200 },
    dm_policy: { enum: ['pairing', 'allowlist', 'open', 'disabled'] },
    group_policy: { enum: ['mention', 'all', 'disabled'] },
    allowed_users: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 1000 },
    default_conversation: { type: 'string', minLength: 1, maxLength: 500 },
    owners: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 100 },
    message_coalesce_window_ms: { type: 'integer', minimum: 0, maximum: 60_000, description: "join one sender's burst into one turn (0: off)" },
    values: { type: 'object', description: "the adapter's fields, as an alternative to giving them at the top level" },
  },
  additionalProperties: true,
} as const;
const testBody = { type: 'object', properties: { to: { type: 'string', minLength: 1, maxLength: 500 } }, additionalProperties: false } as const;
export const TEST_TEXT = 'Talon channel test: this channel can deliver messages.';

export function channelRoutes(app: Routes, parts: ChannelsParts): void {
  const { runtime, settings, sendTo, pairing, qr } = parts;
  const restarted = new WeakSet<QrSession>();

  const require = (name: string): Running => {
    const r = runtime.get(name);
    if (!r) throw notFound(`channel '${name}' not found (no adapter of that name is loaded)`);
    return r;
  };
  const row = async (r: Running) => {
    const s = await settings.get(r.adapter);
    return {
      name: r.adapter.name,
      enabled: Boolean(s?.enabled),
      has_token: Boolean(s?.secrets.token),
      configured: Boolean(s),
      connected: r.state === 'connected',
      state: r.state,
      // The process (node id) running the channel's adapter: another one while this process is on standby.
      holder: r.holder,
      last_error: r.lastError,
    };
  };

  app.get('/api/channels', { schema: { summary: 'The loaded channel adapters', tags } }, async () => {
    const channels = await Promise.all(runtime.list().map(row));
    return { channels, total: channels.length };
  });

  app.get(
    '/api/channels/:name',
    { schema: { summary: "A channel's configuration (secrets redacted) and state", tags, params: nameParams } },
    async (request) => {
      const r = require(request.params.name);
      const s = await settings.get(r.adapter);
      const secrets = Object.fromEntries(secretNames(r.adapter).map((f) => [f, Boolean(s?.secrets[f])]));
      return {
        ...(await row(r)),
        description: r.adapter.description,
        source: s?.source ?? null,
        config: s ? { ...s.common, ...s.fields } : null,
        secrets_set: secrets,
        started_at: r.startedAt,
        last_message_at: r.lastMessageAt,
        messages_received: r.received,
        messages_sent: r.sent,
        backlog: await parts.journal.backlog(r.adapter.name),
        capabilities: r.adapter.capabilities,
        fields: r.adapter.fields,
        secret_fields: secretNames(r.adapter),
      };
    },
  );

  app.post(
    '/api/channels/:name/configure',
    { schema: { summary: 'Configures a channel and restarts its adapter', tags, params: nameParams, body: configureBody } },
    async (request) => {
      const r = require(request.params.name);
      const { token, values, ...rest } = request.body as Record<string, unknown> & { token?: string; values?: Record<string, unknown> };
      const given = { ...(values ?? {}), ...rest };
      const common = Object.fromEntries(Object.entries(given).filter(([k]) => (COMMON_FIELDS as readonly string[]).includes(k)));
      const own = Object.fromEntries(Object.entries(given).filter(([k]) => !(COMMON_FIELDS as readonly string[]).includes(k)));
      const secrets: Record<string, string> = {};
      if (token !== undefined) secrets.token = token;
      for (const f of r.adapter.secretFields) {
        if (f === 'token' || own[f] === undefined) continue;
        if (typeof own[f] !== 'string' || !own[f]) throw badRequest(`field '${f}' must be a non-empty string`);
        secrets[f] = own[f] as string;
        delete own[f];
      }
      const problem = fieldProblem(r.adapter, own) ?? commonProblem(common);
      if (problem) throw badRequest(problem);
      const previous = await settings.get(r.adapter);
      // A partial configure keeps what was set before (fields not given stay).
      const merged: Record<string, unknown> = { ...(previous ? { ...previous.common, ...previous.fields } : {}), ...common, ...own };
      const missing = (r.adapter.fields.required ?? []).find((f) => merged[f] === undefined && !secrets[f] && !previous?.secrets[f]);
      if (missing) throw badRequest(`field '${missing}' is required for channel '${r.adapter.name}'`);
      await settings.put(r.adapter, merged, secrets);
      await runtime.apply(r.adapter.name);
      parts.events.publish('channel.configured', { channel: r.adapter.name, removed: false });
      request.log.info({ channel: r.adapter.name, fields: Object.keys(merged), secrets: Object.keys(secrets) }, 'channel configured');
      return { status: 'configured', ...(await row(r)), config: merged };
    },
  );

  app.delete(
    '/api/channels/:name/configure',
    { schema: { summary: "Removes a channel's configuration and stops it", tags, params: nameParams } },
    async (request) => {
      const r = require(request.params.name);
      // Removed before the stop: a channel with no API configuration (config.toml only) answers 404 and keeps running.
      const removed = await settings.remove(r.adapter.name);
      if (!removed) throw notFound(`channel '${r.adapter.name}' has no configuration set through the API`);
      await runtime.stop(r.adapter.name);
      r.state = 'stopped';
      r.lastError = null;
      r.settings = undefined;
      await runtime.apply(r.adapter.name); // a [channels.<name>] table of config.toml applies again
      parts.events.publish('channel.configured', { channel: r.adapter.name, removed: true });
      return { status: 'removed', name: r.adapter.name };
    },
  );

  app.post('/api/channels/:name/test', { schema: { summary: 'Sends a test message', tags, params: nameParams, body: testBody } }, async (request) => {
    const r = require(request.params.name);
    const [messageId] = await sendTo(r.adapter.name, request.body.to, TEST_TEXT);
    return { status: 'sent', channel: r.adapter.name, message_id: messageId };
  });

  app.post('/api/channels/reload', { schema: { summary: 'Restarts every configured adapter from its configuration', tags } }, async () => {
    const started = await runtime.reloadAll();
    return { status: 'ok', started };
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.put(
      `/api/channels/:name/${action}`,
      { schema: { summary: `${action === 'enable' ? 'Starts' : 'Stops'} a channel, keeping its configuration`, tags, params: nameParams } },
      async (request) => {
        const r = require(request.params.name);
        if (!(await settings.setEnabled(r.adapter, enabled))) throw conflict(`channel '${r.adapter.name}' is not configured`);
        // The holder (this process or another) starts or stops the adapter; a standby one stays on standby.
        await runtime.apply(r.adapter.name);
        parts.events.publish('channel.enabled', { channel: r.adapter.name, enabled });
        return { status: enabled ? 'enabled' : 'disabled', ...(await row(r)) };
      },
    );
  }

  app.post('/api/channels/:name/qr/start', { schema: { summary: 'Starts a QR sign-in', tags, params: nameParams } }, async (request) => {
    const r = require(request.params.name);
    if (!r.adapter.capabilities.qr || !r.adapter.qr) throw badRequest(`channel '${r.adapter.name}' does not sign in by QR code`);
    // A second start while a code is still being scanned answers that code: a reloaded page must not void the phone's scan.
    const open = qr.get(r.adapter.name);
    const now = open?.status();
    if (open && now && (now.status === 'pending' || now.status === 'scanned'))
      return { status: now.status, channel: r.adapter.name, qr_code: now.code ?? open.code, expires_at: now.expiresAt ?? open.expiresAt };
    qr.end(r.adapter.name);
    const session = await r.adapter.qr(await runtime.signInContext(r.adapter.name));
    qr.set(r.adapter.name, session);
    return { status: 'pending', channel: r.adapter.name, qr_code: session.code, expires_at: session.expiresAt };
  });

  app.get(
    '/api/channels/:name/qr/status',
    { schema: { summary: 'The QR sign-in state', tags, params: nameParams }, config: { quiet: true } },
    async (request) => {
      const r = require(request.params.name);
      const session = qr.get(r.adapter.name);
      if (!session) throw notFound(`no QR sign-in started for channel '${r.adapter.name}'`);
      const { status, error, code, expiresAt } = session.status();
      // The spec's states are pending, scanned and authenticated; an expired or failed sign-in is over: an error (410).
      if (status === 'expired' || status === 'failed')
        throw new HttpError(410, `the QR sign-in of channel '${r.adapter.name}' ${status}${error ? `: ${error}` : ''}; start a new one`, { extra: { status } });
      // Signed in: the adapter starts with its new session once, not on every poll that follows (in whichever process
      // holds the channel: apply restarts it here or notes it to the holder).
      if (status === 'authenticated' && !restarted.has(session)) {
        restarted.add(session);
        void runtime.apply(r.adapter.name);
      }
      // Pending: the code to show now (a platform may have rotated it since the start), also drawn as a PNG.
      if (status === 'pending') {
        const qrCode = code ?? session.code;
        return { status, qr_code: qrCode, qr_data_url: await qrDataUrl(qrCode), expires_at: expiresAt ?? session.expiresAt };
      }
      return { status };
    },
  );

  // Pairing: codes waiting for the owner, and their approval.
  app.get('/api/channels/:name/pairing', { schema: { summary: 'Pairing codes waiting for approval', tags, params: nameParams } }, async (request) => {
    const r = require(request.params.name);
    const requests = await pairing.list(r.adapter.name);
    return { requests, total: requests.length };
  });
  const codeParams = {
    type: 'object',
    properties: { name: nameParams.properties.name, code: { type: 'string', minLength: 4, maxLength: 32 } },
    required: ['name', 'code'],
  } as const;
  app.post(
    '/api/channels/:name/pairing/:code/approve',
    { schema: { summary: 'Approves a pairing code: its sender is admitted from now on', tags, params: codeParams } },
    async (request) => {
      const r = require(request.params.name);
      const sender = await pairing.approve(r.adapter.name, request.params.code);
      if (!sender) throw notFound(`pairing code '${request.params.code}' not found or expired`);
      parts.events.publish('channel.pairing_approved', { channel: r.adapter.name, senderId: sender });
      return { status: 'approved', channel: r.adapter.name, sender_id: sender };
    },
  );
  app.delete(
    '/api/channels/:name/pairing/:code',
    { schema: { summary: 'Rejects a pairing code: its sender stays unknown (a later message asks again)', tags, params: codeParams } },
    async (request) => {
      const r = require(request.params.name);
      if (!(await pairing.reject(r.adapter.name, request.params.code))) throw notFound(`pairing code '${request.params.code}' not found or expired`);
      return { status: 'rejected', channel: r.adapter.name, code: request.params.code.toUpperCase() };
    },
  );
}

function commonProblem(common: Record<string, unknown>): string | undefined {
  for (const key of ['agent_name', 'default_conversation'] as const) {
    if (common[key] !== undefined && (typeof common[key] !== 'string' || !common[key])) return `field '${key}' must be a non-empty string`;
  }
  return undefined;
}

/** A QR payload as a PNG data URL (qrcode, loaded on the first sign-in). */
async function qrDataUrl(text: string): Promise<string> {
  const { default: QRCode } = await import('qrcode');
  return QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 1, width: 264 });
}
