/**
 * The people on the other side of the MQTT chat bridge: an mqtt.js client of their own (a persistent session, so
 * what they publish while the broker restarts is sent once it is back) that publishes to topic_in and records every
 * reply on topic_out/#.
 */
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { waitFor } from '@talon/testing';

export interface Reply {
  topic: string;
  id: string;
  chat: string;
  thread?: string;
  text: string;
}

export class People {
  readonly replies: Reply[] = [];
  private constructor(private readonly client: mqtt.MqttClient) {}

  static async connect(url: string, auth: { username: string; password: string }, topicOut: string): Promise<People> {
    const client = mqtt.connect(url, { ...auth, clientId: `people-${randomUUID().slice(0, 8)}`, clean: false, reconnectPeriod: 300, protocolVersion: 4 });
    const people = new People(client);
    client.on('message', (topic, payload) => people.replies.push({ topic, ...(JSON.parse(payload.toString('utf8')) as Omit<Reply, 'topic'>) }));
    await waitFor(() => client.connected, 10_000, 'the people’s client to connect');
    await client.subscribeAsync(`${topicOut}/#`, { qos: 1 });
    return people;
  }

  /** Publishes with QoS 1; resolves on the broker's PUBACK. */
  async publish(topic: string, payload: string | object): Promise<void> {
    await this.client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });
  }

  /** A JSON chat message with a fresh id. */
  say(topic: string, fields: Record<string, unknown>): Promise<void> {
    return this.publish(topic, { id: randomUUID(), ...fields });
  }

  texts(topic: string, thread?: string): string[] {
    return this.replies.filter((r) => r.topic === topic && (thread === undefined || r.thread === thread)).map((r) => r.text);
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
