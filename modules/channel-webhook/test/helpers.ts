import type { AgentTestKernel } from '@talon/testing';
import { signHeaders } from '../services/signature.ts';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-webhook'];
export const SECRET = 'whsec-conformance-0123456789';
export const INBOUND = '/api/channels/webhook/inbound';

/** POSTs a signed inbound body to the kernel without the API key (the route is public: the signature is the credential). */
export function postInbound(k: AgentTestKernel, body: object | string, options: { secret?: string; nowMs?: number; headers?: Record<string, string> } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return fetch(k.url + INBOUND, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(options.secret ?? SECRET, raw, options.nowMs), ...options.headers },
    body: raw,
  });
}
