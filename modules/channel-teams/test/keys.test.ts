// The Bot Framework key set is read again for an unknown key id at most once a second, a failed read included:
// tokens with made-up key ids must not turn each unauthenticated request into fetches while the keys are unreachable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BotFrameworkKeys } from '../services/keys.ts';

test('a failed read of the keys counts toward the refresh cooldown', async () => {
  let now = 1_000_000;
  let fetches = 0;
  let failing = false;
  const keys = new BotFrameworkKeys(
    'https://login.invalid/openid',
    async (url) => {
      fetches += 1;
      if (failing) throw new Error('connection refused');
      return url.endsWith('openid') ? { jwks_uri: 'https://login.invalid/keys' } : { keys: [{ kty: 'RSA', kid: 'real', n: 'x', e: 'AQAB' }] };
    },
    () => now,
  );
  await keys.load();
  now += 5_000;
  failing = true;
  const before = fetches;
  await assert.rejects(keys.find('made-up'), { name: 'KeysUnavailable' });
  for (let i = 0; i < 5; i++) assert.equal(await keys.find('made-up'), undefined);
  assert.equal(fetches - before, 1, 'one read within the second');
  assert.equal((await keys.find('real'))?.kid, 'real', 'the keys held still verify');
  now += 1_000;
  await assert.rejects(keys.find('made-up'), { name: 'KeysUnavailable' });
  assert.equal(fetches - before, 2, 'a second later, one more read');
});
