import { FakeProvider } from '../../test/support/fake-provider.ts';
import { embed } from '../../modules/memory/services/embedder.ts';
const fake = new FakeProvider(); await fake.start();
const target = { baseUrl: `${fake.url}/v1`, model: 'm' };
const p = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * q)].toFixed(2);
for (const mode of ['sdk', 'fetch', 'sdk']) {
  const ts: number[] = [];
  for (let i = 0; i < 300; i++) {
    const s = performance.now();
    if (mode === 'sdk') await embed(target, [`query number ${i} words`], { timeoutMs: 5000, retries: 0 });
    else { const r = await fetch(`${target.baseUrl}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: [`query number ${i} words`], encoding_format: 'float' }) }); await r.json(); }
    ts.push(performance.now() - s);
  }
  console.log(mode, p(ts, 0.5), p(ts, 0.99));
}
await fake.stop();
