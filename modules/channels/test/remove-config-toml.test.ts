/**
 * DELETE /api/channels/{name}/configure on a channel configured only in config.toml ([channels.<name>]): there is no
 * API configuration to remove, so it is a 404 and the channel keeps running (it is not stopped on the way to the 404).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentTestKernel } from '@talon/testing';
import { startChannels, until } from './helpers.ts';

let k: AgentTestKernel;
before(async () => {
  process.env.TALON_TEST_FAKE_TOKEN = 't';
  k = await startChannels({ config: '[channels.fake]\ntoken_env = "TALON_TEST_FAKE_TOKEN"\ndm_policy = "open"\n' });
});
after(() => k?.stop());

const state = async () => ((await (await k.request('/api/channels/fake')).json()) as { state: string; config: unknown }).state;

test('DELETE configure of a config.toml channel: 404, and the channel still runs', async () => {
  await until(async () => (await state()) === 'connected', 'the config.toml channel to connect');
  const res = await k.request('/api/channels/fake/configure', { method: 'DELETE' });
  assert.equal(res.status, 404);
  assert.match(((await res.json()) as { error: string }).error, /no configuration set through the API/);
  assert.equal(await state(), 'connected', 'a 404 must not leave the channel stopped');
});
