import type { KernelApi } from '@talon/module-sdk';

export const uptimeSeconds = (kernel: KernelApi): number => Math.floor((Date.now() - kernel.startedAt.getTime()) / 1000);
