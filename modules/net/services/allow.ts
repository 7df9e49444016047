/** The caller's exemptions (the contract's camelCase) as the SSRF decision's allow list. */
import type { NetExemptions } from '@talon/net';
import type { SsrfAllowList } from './ssrf.ts';

export function allowList(exemptions: NetExemptions = {}): SsrfAllowList {
  return { allow_hosts: exemptions.allowHosts ?? [], allow_cidrs: exemptions.allowCidrs ?? [], allow_origins: exemptions.allowOrigins ?? [] };
}
