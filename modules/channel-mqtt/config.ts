/** The MQTT adapter's configure fields (besides the common ones and `token`, here the broker password). */
import type { ChannelFieldSchema } from '@talon/channels';

/** A topic filter's level separators are allowed; its wildcards and NUL are not (they are a subscription's, not a name's). */
const TOPIC = '^[^+#\\x00]{1,200}$';

export const mqttFields = {
  type: 'object',
  properties: {
    url: {
      type: 'string',
      pattern: '^(mqtts?|wss?)://[^\\s]+$',
      description: 'the broker, e.g. mqtts://broker.example.com:8883 (mqtt, mqtts, ws or wss); no user:password@ in it: the account goes in username and token',
    },
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

/**
 * A url's user:password@ is refused at configure: `url` is stored and echoed back as any field is, so a password
 * there would be shown to whoever reads the configuration; the account goes in `username`, its password in the
 * `token` secret (the vault, never echoed).
 */
export function mqttFieldsProblem(values: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof values.url !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(values.url)) return undefined;
  return "field 'url' must not carry a user name or password (user:password@host): give the broker account as 'username' and its password as 'token', which is kept secret";
}

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
