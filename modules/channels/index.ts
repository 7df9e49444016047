import { defineModule } from '@talon/module-sdk';
import { channelEvents, channelHooks } from '@talon/channels';
import { channelsConfigSchema, type ChannelsConfig } from './config.ts';

export default defineModule<ChannelsConfig>({
  configSchema: channelsConfigSchema,
  hooks: [channelHooks],
  events: [channelEvents],
  register() {
    return {};
  },
});
