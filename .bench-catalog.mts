import { startTestKernel } from '@talon/module-sdk/testing';
const k = await startTestKernel({ only: ['catalog'] });
for (let i = 0; i < 200; i++) await (await k.request('/api/models')).arrayBuffer();
const t: number[] = [];
for (let i = 0; i < 2000; i++) { const s = performance.now(); await (await k.request('/api/models')).arrayBuffer(); t.push(performance.now() - s); }
t.sort((a, b) => a - b);
console.log('p50', t[1000].toFixed(2), 'p99', t[1980].toFixed(2), 'bytes', (await (await k.request('/api/models')).text()).length);
await k.stop();
