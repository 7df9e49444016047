/** The MQTT adapter's configure fields (besides the common ones and `token`, here the broker password). */
import type { ChannelFieldSchema } from '@talon/channels';

/** A topic filter's level separators are allowed; its wildcards and NUL are not (they are a subscription's, not a name's). */
const TOPIC = '^[^+#\\x00]{1,200}$';

export const mqttFields = {
  type: 'object',
  properties: {
    url: { type: 'string', pattern: '^(mqtts?|wss?)://[^\\s]+$', description: 'the broker, e.g. mqtts://broker.example.com:8883 (mqtt, mqtts, ws or wss)' },
    topic_in: { type: 'string', pattern: TOPIC, description: 'messages for the bot: this topic and every topic under it (topic_in/#), QoS 1' },
    topic_out: { type: 'string', pattern: TOPIC, description: 'replies go to topic_out/<chat> with QoS 1' },
    username: { type: 'string', minLength: 1, maxLength: 200, description: 'the broker account; its password is the token' },
    client_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]{1,64}$',
      description: 'the persistent session’s client id (default talon-<channel>); the broker keeps QoS 1 messages for it while the bot is offline',
    },
  },
  required: ['url', 'topic_in', 'topic_out'],
  additionalProperties: false,
} as const satisfies ChannelFieldSchema;

export interface MqttSettings {
  url: string;
  topicIn: string;
  topicOut: string;
  clientId: string;
  username?: string;
  password?: string;
}

/** The settings from the context's validated fields and secrets. */
export function mqttSettings(channel: string, config: Readonly<Record<string, unknown>>, secrets: Readonly<Record<string, string | undefined>>): MqttSettings {
  return {
    url: String(config.url),
    topicIn: String(config.topic_in).replace(/\/+$/, ''),
    topicOut: String(config.topic_out).replace(/\/+$/, ''),
    clientId: typeof config.client_id === 'string' ? config.client_id : `talon-${channel}`,
    ...(typeof config.username === 'string' ? { username: config.username } : {}),
    ...(secrets.token ? { password: secrets.token } : {}),
  };
}
