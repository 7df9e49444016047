export { startTestKernel } from './kernel.ts';
export type { TestKernel, TestKernelOptions } from './kernel.ts';
export { FakeProvider, fakeEmbedding } from './fake-provider.ts';
export type { ScriptedReply, ScriptedToolCall, RecordedRequest } from './fake-provider.ts';
export { waitFor } from './wait.ts';
