/**
 * trusted_proxies: behind a load balancer every request comes from the balancer; X-Forwarded-For names the client, but
 * only a proxy named in the configuration may say so (anyone else could name any client and escape its rate limit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';

// Three GETs of burst (0.05 units a second for a 60 s burst): the fourth of one client is refused.
const LIMIT = 'rate_limit_per_second = 0.05\n';

async function statuses(config: string): Promise<{ sameClient: number; otherClient: number }> {
  const k = await startTestKernel({ only: ['rate-limit', 'system', 'error-envelope'], config: LIMIT + config });
  try {
    const get = (client: string) => k.request('/api/version', { headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 3; i++) assert.equal((await get('203.0.113.9')).status, 200);
    return { sameClient: (await get('203.0.113.9')).status, otherClient: (await get('203.0.113.10')).status };
  } finally {
    await k.stop();
  }
}

test('a trusted proxy: each client its X-Forwarded-For names has its own budget', async () => {
  assert.deepEqual(await statuses('trusted_proxies = ["127.0.0.1"]\n'), { sameClient: 429, otherClient: 200 });
});

test('no trusted proxy (the default): X-Forwarded-For is ignored, the peer is the client', async () => {
  assert.deepEqual(await statuses(''), { sameClient: 429, otherClient: 429 });
});

test('a trusted_proxies entry that is no address or range stops start-up naming the key', async () => {
  await assert.rejects(
    startTestKernel({ only: ['system'], config: 'trusted_proxies = ["the balancer"]\n' }),
    (err: Error) => /trusted_proxies/.test(err.message) && /IP address or CIDR range/.test(err.message),
  );
});
