/**
 * OAuth 2.0 device authorization grant (RFC 8628), as GitHub runs it for
 * Copilot: start asks for a device/user code pair; each poll asks the token
 * endpoint once. Pending flows live in memory (they last minutes).
 */
import { randomUUID } from 'node:crypto';
import { excerpt, probe, ProbeError } from './http-probe.ts';

export interface DeviceFlowConfig {
  client_id: string;
  scope: string;
  device_code_url: string;
  token_url: string;
}

export interface DeviceStart {
  poll_id: string;
  device_code: string;
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}

export type PollResult = { status: 'pending' } | { status: 'expired' } | { status: 'denied' } | { status: 'authorized'; token: string };

interface Flow {
  provider: string;
  deviceCode: string;
  expiresAt: number;
}

const TIMEOUT_MS = 10_000;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };

export class DeviceFlows {
  private readonly flows = new Map<string, Flow>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  async start(provider: string, cfg: DeviceFlowConfig): Promise<DeviceStart> {
    for (const [id, f] of this.flows) if (f.expiresAt <= this.now()) this.flows.delete(id);
    const reply = await probe(cfg.device_code_url, {
      method: 'POST',
      headers,
      body: form({ client_id: cfg.client_id, scope: cfg.scope }),
      timeoutMs: TIMEOUT_MS,
    });
    const b = (reply.body ?? {}) as Record<string, unknown>;
    const ok = reply.status === 200 && typeof b.device_code === 'string' && typeof b.user_code === 'string' && typeof b.verification_uri === 'string';
    if (!ok) throw new ProbeError(`device-code request to ${cfg.device_code_url} failed (HTTP ${reply.status}): ${excerpt(reply.body)}`);
    const expiresIn = typeof b.expires_in === 'number' ? b.expires_in : 900;
    const interval = typeof b.interval === 'number' ? b.interval : 5;
    const pollId = randomUUID();
    this.flows.set(pollId, { provider, deviceCode: b.device_code as string, expiresAt: this.now() + expiresIn * 1000 });
    return {
      poll_id: pollId,
      device_code: b.device_code as string,
      user_code: b.user_code as string,
      verification_uri: b.verification_uri as string,
      expires_in: expiresIn,
      interval,
    };
  }

  /** undefined for an unknown poll id (or one of another provider). */
  async poll(provider: string, pollId: string, cfg: DeviceFlowConfig): Promise<PollResult | undefined> {
    const flow = this.flows.get(pollId);
    if (!flow || flow.provider !== provider) return undefined;
    if (flow.expiresAt <= this.now()) {
      this.flows.delete(pollId);
      return { status: 'expired' };
    }
    const reply = await probe(cfg.token_url, {
      method: 'POST',
      headers,
      body: form({ client_id: cfg.client_id, device_code: flow.deviceCode, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }),
      timeoutMs: TIMEOUT_MS,
    });
    const b = (reply.body ?? {}) as Record<string, unknown>;
    if (typeof b.access_token === 'string' && b.access_token) {
      this.flows.delete(pollId);
      return { status: 'authorized', token: b.access_token };
    }
    switch (b.error) {
      case 'authorization_pending':
      case 'slow_down':
        return { status: 'pending' };
      case 'expired_token':
        this.flows.delete(pollId);
        return { status: 'expired' };
      case 'access_denied':
        this.flows.delete(pollId);
        return { status: 'denied' };
      default:
        throw new ProbeError(`token request to ${cfg.token_url} failed (HTTP ${reply.status}): ${excerpt(reply.body)}`);
    }
  }
}
