/**
 * Background replies (a trigger's, a schedule's, a task wake-up's turn) to the agent's home channel, through the
 * triggers module's `homeChannel` hook. The home channel is the first running channel (here or in another process) (by name) whose `agent_name`
 * names the agent and that has a `default_conversation`: the reply goes there through the outbound journal, and the
 * channel's name is answered so the delivery records where it went. Without one the next tap is asked (and the reply
 * stays in the session). triggers is optional: without it nothing is tapped.
 */
import { triggerHooks, type HomeDelivery } from '@talon/triggers';
import type { ChannelsContext, ChannelsParts } from './channels.ts';
import { canSend } from './runtime.ts';

/** The agent's home channel, if one is running: agent_name matches the agent's name or id (case-insensitive). */
export function homeChannelOf(parts: Pick<ChannelsParts, 'runtime'>, agent: { agentId: string; agentName: string }): string | undefined {
  const names = new Set([agent.agentId.toLowerCase(), agent.agentName.toLowerCase()]);
  const home = parts.runtime
    .list()

    .find((r) => canSend(r) && r.settings?.common.default_conversation && names.has(r.settings.common.agent_name?.toLowerCase() ?? ''));
  return home?.adapter.name;
}

export function tapHomeChannel(ctx: ChannelsContext, parts: ChannelsParts): void {
  ctx.hooks.tryTap(triggerHooks)?.homeChannel.tapPromise('channels', async (delivery: HomeDelivery) => {
    const channel = homeChannelOf(parts, delivery);
    if (!channel || !delivery.text.trim()) return undefined;
    // A failed send throws: the delivery is recorded as kept, and the journal keeps the failed rows with their text.
    await ctx.track(parts.sendTo(channel, undefined, delivery.text));
    return channel;
  });
}
