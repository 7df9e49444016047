import type { ChannelKit } from '@talon/channels';

export type ReconnectLink = Parameters<ConstructorParameters<ChannelKit['Reconnector']>[0]['connect']>[0];
