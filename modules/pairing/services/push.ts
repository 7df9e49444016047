/** POST /api/pairing/notify: one push per target through ntfy or Gotify, over the SSRF-checked client. */
import { badRequest } from '@talon/module-sdk';
import type { NetFetch } from '@talon/net';
import type { PairingConfig } from '../config.ts';
import type { PushOutcome } from '@talon/pairing';
import type { DeviceRow, Devices } from './devices.ts';

interface Push {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** ntfy: a topic per device that registered one, plus the shared topic once for the others. Gotify: one message (its app fans it out). */
function targets(config: PairingConfig, devices: DeviceRow[], title: string, message: string, env: NodeJS.ProcessEnv): Push[] {
  if (config.push_provider === 'ntfy') {
    const topics = new Set(devices.map((d) => d.push_token ?? config.ntfy_topic).filter((t) => t !== ''));
    const base = config.ntfy_url.replace(/\/+$/, '');
    return [...topics].map((t) => ({
      url: `${base}/${encodeURIComponent(t)}`,
      headers: { title, 'content-type': 'text/plain; charset=utf-8' },
      body: message,
    }));
  }
  const token = env[config.gotify_token_env];
  if (!config.gotify_url || !token) throw badRequest(`[pairing] push_provider = "gotify" needs gotify_url and $${config.gotify_token_env}`);
  return [
    {
      url: `${config.gotify_url.replace(/\/+$/, '')}/message`,
      headers: { 'x-gotify-key': token, 'content-type': 'application/json' },
      body: JSON.stringify({ title, message, priority: 5 }),
    },
  ];
}

export async function notifyDevices(
  net: NetFetch,
  config: PairingConfig,
  devices: DeviceRow[],
  note: { title: string; message: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ sent: number; failed: number; errors: string[] }> {
  if (config.push_provider === 'none') throw badRequest('no push provider: set [pairing] push_provider = "ntfy" or "gotify"');
  if (!devices.length) return { sent: 0, failed: 0, errors: [] };
  const pushes = targets(config, devices, note.title, note.message, env);
  const outcomes = await Promise.all(
    pushes.map(async (p) => {
      try {
        const res = await net.fetch({
          url: p.url,
          method: 'POST',
          headers: p.headers,
          body: p.body,
          timeoutMs: 10_000,
          maxBytes: 4096,
          maxRedirects: 0,
          allowHosts: config.allow_hosts,
        });
        return res.status >= 200 && res.status < 300 ? undefined : `${new URL(p.url).host} answered ${res.status}`;
      } catch (err) {
        return (err as Error).message;
      }
    }),
  );
  const errors = outcomes.filter((o): o is string => o !== undefined);
  return { sent: pushes.length - errors.length, failed: errors.length, errors };
}

/** For other modules (approval notices): skips quietly when pairing or push is off, never throws. */
export async function pushToAll(devices: Devices, config: PairingConfig, net: () => NetFetch, note: { title: string; message: string }): Promise<PushOutcome> {
  if (!config.enabled) return { sent: 0, failed: 0, skipped: 'pairing is not enabled' };
  if (config.push_provider === 'none') return { sent: 0, failed: 0, skipped: 'no push provider' };
  const list = await devices.list();
  if (!list.length) return { sent: 0, failed: 0, skipped: 'no paired device' };
  try {
    const { sent, failed } = await notifyDevices(net(), config, list, note);
    return { sent, failed };
  } catch (err) {
    return { sent: 0, failed: 0, skipped: (err as Error).message };
  }
}
