/**
 * The shared channel conformance suite for the MQTT adapter, against Debian's mosquitto. DM `n` is the chat `dm<n>`
 * (JSON messages on talon/in/dm<n>), group `n` the chat `group<n>` with `group: true` and `mentioned`; replies are read
 * from talon/out/<chat>. The broker is restarted to drop the connection (its persistent sessions survive: nothing
 * lost, nothing twice); a wrong password is refused with CONNACK 5.
 */
import { describe } from 'node:test';
import { channelConformance, mqttServerMissing, startMqttServer } from '@talon/testing';
import { MQTT_MAX_CHARS } from '../services/adapter.ts';
import { People } from './people.ts';

const missing = mqttServerMissing();
if (missing) describe('channel-mqtt: channel conformance', { skip: missing }, () => undefined);
else
  channelConformance({
    name: 'channel-mqtt',
    channel: 'mqtt',
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-mqtt'],
    limits: { maxLength: MQTT_MAX_CHARS, unit: 'chars' },
    async harness() {
      const broker = await startMqttServer({ users: { talon: 'bot-password', people: 'people-password' } });
      const people = await People.connect(broker.url, { username: 'people', password: 'people-password' }, 'talon/out');
      return {
        configure: { url: broker.url, topic_in: 'talon/in', topic_out: 'talon/out', username: 'talon', token: 'bot-password' },
        badCredentials: { token: 'not-the-bot-password' },
        dm: (n, text) => people.say(`talon/in/dm${n}`, { sender: `user${n}`, text }),
        group: (n, text, { mentioned, thread }) =>
          people.say('talon/in', { chat: `group${n}`, sender: 'member', text, group: true, mentioned, ...(thread ? { thread } : {}) }),
        received: (target) => ('dm' in target ? people.texts(`talon/out/dm${target.dm}`) : people.texts(`talon/out/group${target.group}`, target.thread)),
        thread: (n) => `t${n}`,
        dmChat: (n) => `dm${n}`,
        dropConnection: () => broker.restart(),
        async stop() {
          await people.close();
          await broker.stop();
        },
      };
    },
  });
