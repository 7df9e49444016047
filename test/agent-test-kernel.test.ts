/** The testing kit's startAgentTestKernel: a kernel whose default model is the scripted provider it started. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProvider, startAgentTestKernel } from '@talon/testing';

test('the script answers the first turn, the caller’s config wins over the defaults, stop() stops kernel and provider', async () => {
  const k = await startAgentTestKernel({
    only: ['agents', 'error-envelope'],
    script: [{ text: 'scripted first' }],
    config: (url) => `log_level = "silent"\n[default_model]\nmodel = "chosen-model"\nbase_url = "${url}/v1"\n[llm]\nmax_retries = 1\n`,
  });
  let stopped = false;
  try {
    const agent = await k.spawnAgent('probe', { model: { system_prompt: 'You are the probe.' } });
    const res = await k.message(agent, 'hello');
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(JSON.stringify(await res.json()), /scripted first/);
    const sent = k.fake.requests.at(-1)!.body as { model: string; messages: Array<{ content: unknown }> };
    assert.equal(sent.model, 'chosen-model');
    assert.match(JSON.stringify(sent.messages), /You are the probe\./);
    assert.equal(k.kernel.config.raw().llm && (k.kernel.config.raw().llm as { max_retries: number }).max_retries, 1);
    const url = k.fake.url;
    await k.stop();
    stopped = true;
    await assert.rejects(fetch(`${url}/v1/models`), 'the provider was stopped');
  } finally {
    if (!stopped) await k.stop();
  }
});

test('a shared provider serves two kernels and is left running by their stop()', async () => {
  const fake = new FakeProvider();
  await fake.start();
  try {
    for (const name of ['one', 'two']) {
      const k = await startAgentTestKernel({ fake, only: ['agents', 'error-envelope'], script: [{ text: `from ${name}` }] });
      try {
        const res = await k.message(await k.spawnAgent(name), 'hi');
        assert.match(await res.text(), new RegExp(`from ${name}`));
      } finally {
        await k.stop();
      }
    }
    assert.equal((await fetch(`${fake.url}/v1/models`)).status, 200);
  } finally {
    await fake.stop();
  }
});
