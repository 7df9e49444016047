import { startTestKernel } from '@talon/module-sdk/testing';
import { FakeProvider } from './test/support/fake-provider.ts';
const fake = new FakeProvider().setFallback({ text: 'pong', usage: { input: 3, output: 1 } });
await fake.start();
process.env.FAKE_KEY = 'x';
const k = await startTestKernel({ config: `rate_limit_per_second = 1000000\n[default_model]\nprovider = "openai"\nmodel = "fake-model"\nbase_url = "${fake.url}/v1"\napi_key_env = "FAKE_KEY"\n` });
const r = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "p"\n' } });
const { agent_id } = await r.json() as { agent_id: string };
const times: number[] = []; const direct: number[] = [];
for (let i = 0; i < 400; i++) {
  let t = performance.now();
  await (await fetch(`${fake.url}/v1/chat/completions`, { method: 'POST', headers: {'content-type':'application/json'}, body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'ping' }] }) })).arrayBuffer();
  direct.push(performance.now() - t);
  t = performance.now();
  const res = await k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'ping' } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(String(res.status));
  times.push(performance.now() - t);
}
const p = (a: number[]) => a.slice(50).sort((x, y) => x - y)[Math.floor((a.length - 50) / 2)];
console.log('direct p50', p(direct).toFixed(2), 'talon p50', p(times).toFixed(2));
await k.stop(); await fake.stop();
