// The shared channel conformance suite for the Teams adapter: the Bot Framework fake signs each activity and POSTs it
// into the kernel's messaging endpoint, and records what the bot sends to its connector.
import assert from 'node:assert/strict';
import { channelConformance, startTeamsFake } from '@talon/testing';
import { MESSAGES_ROUTE } from '../config.ts';
import { configureFor, dmConversation, groupConversation, MODULES, textsTo } from './helpers.ts';

channelConformance({
  name: 'channel-teams',
  channel: 'teams',
  only: MODULES,
  limits: { maxLength: 4000, unit: 'chars' },
  async harness(kernel) {
    const teams = await startTeamsFake();
    const deliver = async (message: Parameters<typeof teams.send>[0]) => {
      teams.deliverTo(kernel().url + MESSAGES_ROUTE);
      const res = await teams.send(message);
      assert.equal(res.status, 200, `the messaging endpoint answered ${res.status}: ${res.body}`);
    };
    return {
      configure: configureFor(teams),
      badCredentials: { token: 'not-the-app-password' },
      dm: (n, text) => deliver({ conversationId: dmConversation(n), conversationType: 'personal', text }),
      group: (n, text, { mentioned, thread }) =>
        deliver({ conversationId: groupConversation(n, thread), conversationType: thread ? 'channel' : 'groupChat', text, mentionBot: mentioned }),
      received: (target) => {
        if ('dm' in target) return textsTo(teams, dmConversation(target.dm));
        if (target.thread) return textsTo(teams, groupConversation(target.group, target.thread));
        return textsTo(teams, groupConversation(target.group));
      },
      typings: (n) => teams.sent.filter((s) => s.conversationId === dmConversation(n) && s.activity.type === 'typing').length,
      rateLimitOnce: (seconds) => teams.failNext(429, seconds),
      dmChat: (n) => dmConversation(n),
      thread: (n) => `17000000000${n}`,
      stop: () => teams.stop(),
    };
  },
});
