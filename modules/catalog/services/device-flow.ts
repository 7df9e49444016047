/**
 * OAuth 2.0 device authorization grant (RFC 8628), as GitHub runs it for
 * Copilot: start asks for a device/user code pair; each poll asks the token
 * endpoint once. Pending flows live in catalog_device_flows (they last minutes), so a poll that reaches another
 * process or node than the start finds its flow.
 */
import { randomUUID } from 'node:crypto';
import type { Queries } from '@talon/module-sdk';
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
  device_code: string;
  expires_at: number;
}

const TIMEOUT_MS = 10_000;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };

export class DeviceFlows {
  constructor(
    private readonly store: Queries,
    private readonly now: () => number = () => Date.now(),
  ) {}

  async start(provider: string, cfg: DeviceFlowConfig): Promise<DeviceStart> {
    await this.store.run('DELETE FROM catalog_device_flows WHERE expires_at <= ?', [this.now()]);
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
    await this.store.run('INSERT INTO catalog_device_flows (poll_id, provider, device_code, expires_at) VALUES (?, ?, ?, ?)', [
      pollId,
      provider,
      b.device_code as string,
      this.now() + expiresIn * 1000,
    ]);
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
    const flow = await this.store.one<Flow>('SELECT provider, device_code, expires_at FROM catalog_device_flows WHERE poll_id = ?', [pollId]);
    if (!flow || flow.provider !== provider) return undefined;
    if (flow.expires_at <= this.now()) return this.end(pollId, { status: 'expired' });
    const reply = await probe(cfg.token_url, {
      method: 'POST',
      headers,
      body: form({ client_id: cfg.client_id, device_code: flow.device_code, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }),
      timeoutMs: TIMEOUT_MS,
    });
    const b = (reply.body ?? {}) as Record<string, unknown>;
    if (typeof b.access_token === 'string' && b.access_token) return this.end(pollId, { status: 'authorized', token: b.access_token });
    switch (b.error) {
      case 'authorization_pending':
      case 'slow_down':
        return { status: 'pending' };
      case 'expired_token':
        return this.end(pollId, { status: 'expired' });
      case 'access_denied':
        return this.end(pollId, { status: 'denied' });
      default:
        throw new ProbeError(`token request to ${cfg.token_url} failed (HTTP ${reply.status}): ${excerpt(reply.body)}`);
    }
  }

  /** A finished flow is forgotten: a later poll of it is an unknown poll id. */
  private async end(pollId: string, result: PollResult): Promise<PollResult> {
    await this.store.run('DELETE FROM catalog_device_flows WHERE poll_id = ?', [pollId]);
    return result;
  }
}
