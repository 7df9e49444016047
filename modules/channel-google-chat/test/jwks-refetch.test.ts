// The request verifier reads Google's keys again for an unknown key id at most once a minute, whatever the outcome
// and however many requests ask at once: forged key ids must not turn each unauthenticated request into a fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import type { AdapterContext, ChannelKit } from '@talon/channels';
import { requestVerifier } from '../services/auth.ts';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

async function setup() {
  const jwk = { ...(await exportJWK(publicKey)), kid: 'real', alg: 'RS256', use: 'sig' };
  const state = { fetches: 0, failing: false };
  const ctx = {
    signal: new AbortController().signal,
    fetch: async () => {
      state.fetches += 1;
      if (state.failing) throw new Error('connection refused');
      return { status: 200, headers: {}, body: Buffer.from(JSON.stringify({ keys: [jwk] })), truncated: false };
    },
  } as unknown as AdapterContext;
  const verifier = requestVerifier(ctx, () => ({}) as ChannelKit, { jwksUrl: 'https://keys.invalid/jwks', issuer: 'chat', audience: '42' });
  await verifier.load();
  const forged = await new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', kid: 'made-up' })
    .setIssuer('chat')
    .setAudience('42')
    .setExpirationTime('1h')
    .sign(privateKey);
  return { verifier, state, header: `Bearer ${forged}` };
}

/** Runs `fn` with Date.now() moved `ms` ahead. */
async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  const shifted = real() + ms;
  Date.now = () => shifted;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

test('concurrent requests naming unknown key ids share one read of the keys', async () => {
  const { verifier, state, header } = await setup();
  const before = state.fetches;
  const problems = await later(61_000, () => Promise.all(Array.from({ length: 20 }, () => verifier.verify(header))));
  assert.ok(problems.every((p) => p !== undefined));
  assert.equal(state.fetches - before, 1);
});

test('a failed read of the keys still counts: the next unknown key id within a minute fetches nothing', async () => {
  const { verifier, state, header } = await setup();
  state.failing = true;
  const before = state.fetches;
  await later(61_000, async () => {
    for (let i = 0; i < 5; i++) assert.notEqual(await verifier.verify(header), undefined);
  });
  assert.equal(state.fetches - before, 1);
});
