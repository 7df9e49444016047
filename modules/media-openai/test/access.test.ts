import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MediaDriverKit, ProviderAccess } from '@talon/media';
import { openaiMediaDriver } from '../driver.ts';
import { openaiMediaConfigSchema, type OpenaiMediaConfig } from '../config.ts';

/** A kit that knows only the provider's access; these checks make no call. */
function kitWith(access: ProviderAccess): MediaDriverKit {
  return { provider: () => access } as unknown as MediaDriverKit;
}

const defaults = Object.fromEntries(Object.entries(openaiMediaConfigSchema.properties).map(([k, v]) => [k, v.default])) as OpenaiMediaConfig;

test("OpenAI's own API needs a key even with keyless set; another server with keyless needs none", () => {
  const keyless = { ...defaults, keyless: true };
  assert.equal(openaiMediaDriver(kitWith({ baseUrl: 'https://api.openai.com/v1' }), () => keyless).configured(), false);
  assert.equal(openaiMediaDriver(kitWith({}), () => keyless).configured(), false, 'no base URL is OpenAI’s');
  assert.equal(openaiMediaDriver(kitWith({ baseUrl: 'http://10.0.0.5:8000/v1' }), () => keyless).configured(), true);
  assert.equal(openaiMediaDriver(kitWith({ baseUrl: 'http://10.0.0.5:8000/v1' }), () => defaults).configured(), false, 'keyless is opt-in');
  assert.equal(openaiMediaDriver(kitWith({ baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x' }), () => defaults).configured(), true);
});

test('the setup hint names the env var and how to reach a compatible server', () => {
  const hint = openaiMediaDriver(kitWith({ envVar: 'OPENAI_API_KEY' }), () => defaults).setupHint();
  assert.match(hint, /OPENAI_API_KEY/);
  assert.match(hint, /\[provider_urls\] openai/);
  assert.match(hint, /keyless = true/);
});
