/** ChannelErrors as the contract defines them: told apart by name and kind (they cross module bundles). */
import type { ChannelError } from '@talon/channels';

export function channelError(kind: ChannelError['kind'], message: string): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind });
}

export const isAuthError = (err: unknown): boolean => err instanceof Error && err.name === 'ChannelError' && (err as ChannelError).kind === 'auth';
