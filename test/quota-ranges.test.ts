/**
 * Issue 23: a budget of 1e308 was accepted. Every numeric budget or quota of config.toml has a range, and a value
 * outside it stops start-up with a message naming the key and what is allowed (the schema's x-error text).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';

const cases: Array<{ module: string; config: string; message: string }> = [
  {
    module: 'usage',
    config: '[usage]\ndaily_limit_usd = 1e308',
    message: "invalid value for 'usage.daily_limit_usd': a number of USD from 0 (unlimited) to 1000000",
  },
  {
    module: 'usage',
    config: '[usage]\nagent_monthly_limit_usd = 5e6',
    message: "invalid value for 'usage.agent_monthly_limit_usd': a number of USD from 0 (unlimited) to 1000000",
  },
  {
    module: 'usage',
    config: '[usage]\nhourly_token_limit = 1e300',
    message: "invalid value for 'usage.hourly_token_limit': a whole number of tokens from 0 (unlimited) to 10000000000",
  },
  {
    module: 'rate-limit',
    config: 'rate_limit_per_second = 1e308',
    message: "invalid value for 'rate_limit_per_second': cost units per second per client IP: more than 0, at most 1000000",
  },
  { module: 'rate-limit', config: 'rate_limit_per_second = 0', message: "invalid value for 'rate_limit_per_second': cost units per second per client IP" },
  { module: 'wasm', config: '[wasm]\nfuel = 1e19', message: "invalid value for 'wasm.fuel': an instruction budget from 1000 to 1000000000000" },
  {
    module: 'memory',
    config: '[memory]\nextractions_per_hour = 1e9',
    message: "invalid value for 'memory.extractions_per_hour': LLM extractions per agent and hour from 0 (none) to 100000",
  },
];

for (const { module, config, message } of cases) {
  test(`${config.replace('\n', ' ')}: start-up refuses it naming the key and the range`, async () => {
    // A kernel that starts anyway is stopped, so a missing check fails the test instead of leaving it running.
    const outcome = await startTestKernel({ only: [module], config: `${config}\n` }).then(
      async (k) => (await k.stop(), 'started'),
      (err: Error) => err.message,
    );
    assert.ok(outcome.includes(message), outcome);
  });
}
