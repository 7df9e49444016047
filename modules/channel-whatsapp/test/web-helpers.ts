// What the WhatsApp Web tests share: a kernel whose WhatsApp Web sockets come from the fake (the whatsapp-fake-socket
// fixture module replaces Baileys at whatsappHooks.socketFactory), the fake reached through the service registry, and
// the QR sign-in walked through the routes.
import assert from 'node:assert/strict';
import path from 'node:path';
import { startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import type { FakeWhatsApp } from './fixtures/whatsapp-fake-socket/fake-socket.ts';
import { MODULES } from './helpers.ts';

export const WEB_MODULES = [...MODULES, 'whatsapp-fake-socket'];
export const WEB_CONFIG = `module_paths = ["${path.join(import.meta.dirname, 'fixtures')}"]\n`;

export const fakeOf = (k: AgentTestKernel): FakeWhatsApp => k.kernel.services.view<FakeWhatsApp>('whatsapp-fake-socket.fake');

/** A kernel with the channels, the WhatsApp module and the fake socket; `modules` adds more (media). */
export function startWebKernel(options: { home?: string; keepHome?: boolean; modules?: string[] } = {}): Promise<AgentTestKernel> {
  const { modules = [], ...rest } = options;
  return startAgentTestKernel({ only: [...WEB_MODULES, ...modules], config: WEB_CONFIG, ...rest });
}

export interface ChannelView {
  state: string;
  last_error: string | null;
}

export const call = async (k: AgentTestKernel, method: string, url: string, json?: unknown) => {
  const res = await k.request(url, { method, ...(json !== undefined ? { json } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
export const channel = async (k: AgentTestKernel) => (await call(k, 'GET', '/api/channels/whatsapp')).body as ChannelView & Record<string, unknown>;
export const qrStart = (k: AgentTestKernel) => call(k, 'POST', '/api/channels/whatsapp/qr/start');
export const qrStatus = (k: AgentTestKernel) => call(k, 'GET', '/api/channels/whatsapp/qr/status');

export async function configureWeb(k: AgentTestKernel, body: Record<string, unknown> = {}): Promise<void> {
  const res = await call(k, 'POST', '/api/channels/whatsapp/configure', { mode: 'web', dm_policy: 'open', group_policy: 'mention', ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

export const until = <T>(probe: () => T | undefined | Promise<T | undefined>, what: string, ms = 15_000) => waitFor(probe, ms, what);

export const untilState = (k: AgentTestKernel, state: string) =>
  until(async () => {
    const c = await channel(k);
    return c.state === state ? c : undefined;
  }, `whatsapp ${state}`);

/** The whole QR walk: start, the phone scans, polled until authenticated; then the channel connects. */
export async function signIn(k: AgentTestKernel): Promise<void> {
  const fake = fakeOf(k);
  assert.equal((await qrStart(k)).status, 200);
  fake.scan();
  await until(async () => ((await qrStatus(k)).body.status === 'authenticated' ? true : undefined), 'the sign-in authenticated');
  await untilState(k, 'connected');
}
