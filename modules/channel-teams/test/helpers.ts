// What the Teams adapter's kernel tests share: the modules a kernel needs, and the fake's conversations per case.
import type { TeamsFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-teams'];

export const dmConversation = (n: number) => `a:dm-${n}`;
/** A group chat; with a thread, a reply chain of a channel (Teams' threads live in channels). */
export const groupConversation = (n: number, thread?: string) => (thread ? `19:group-${n}@thread.skype;messageid=${thread}` : `19:group-${n}@thread.v2`);

/** The configure fields pointing the adapter at the fake. */
export const configureFor = (teams: TeamsFake) => ({
  app_id: teams.appId,
  token: teams.appPassword,
  openid_url: teams.openidUrl,
  token_url: teams.tokenUrl,
  service_url: teams.serviceUrl,
  service_url_allow: teams.origin,
});

/** Message texts the bot sent to a conversation (typing activities aside). */
export const textsTo = (teams: TeamsFake, conversationId: string) =>
  teams.sent.filter((s) => s.conversationId === conversationId && s.activity.type === 'message').map((s) => String(s.activity.text));
