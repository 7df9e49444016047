/** A platform call's failure as the adapter classified it: errors cross module bundles, so told by name, never instanceof. */
import type { ChannelError } from '@talon/channels';

export const asChannelError = (err: unknown): ChannelError | undefined =>
  err instanceof Error && err.name === 'ChannelError' ? (err as ChannelError) : undefined;
