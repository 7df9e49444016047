/**
 * Owner notices: what an agent raised with `notify_owner` during a turn (TurnResult.ownerNotice) goes, once the turn
 * finished, to the owners configured on the running channels (`owners`: the chat ids of their direct chats), through
 * the outbound journal. No model call: the notice's own text, named by the agent it came from.
 */
import { agentHooks } from '@talon/agents';
import type { Channels } from '@talon/channels';
import type { ChannelsContext } from './channels.ts';

export function tapOwnerNotices(ctx: ChannelsContext, channels: Channels): void {
  ctx.hooks.tap(agentHooks).afterTurn.tapPromise('channels-owner-notices', async (turn) => {
    const notice = turn.result.ownerNotice;
    if (notice) await ctx.track(channels.notifyOwners(`Owner notice from agent '${turn.agent.name}':\n${notice}`));
  });
}
