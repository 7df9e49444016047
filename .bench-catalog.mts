import { startTestKernel } from '@talon/module-sdk/testing';
const k = await startTestKernel({ only: ['catalog', 'system'] });
console.log(k.url);
await new Promise((r) => setTimeout(r, 25000));
await k.stop();
