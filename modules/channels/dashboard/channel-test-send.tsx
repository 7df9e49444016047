/** A test message to a chat of the channel (its default conversation when none is given). */
import { useState } from 'preact/hooks';
import { api, seg, useAction } from '@talon/dashboard-kit';
import { ActionStatus } from './channel-parts.tsx';
import type { ChannelDetail } from './channel-types.ts';

export function TestSend({ channel }: { channel: ChannelDetail }) {
  const [to, setTo] = useState('');
  const action = useAction();
  const fallback = typeof channel.config?.default_conversation === 'string' ? channel.config.default_conversation : '';
  const submit = action.submit(async () => {
    const r = await api<{ message_id: string }>(`/api/channels/${seg(channel.name)}/test`, { json: to ? { to } : {} });
    return `Test message sent to ${to || fallback} (message ${r.message_id})`;
  });
  return (
    <form class="grid-form card" aria-label="Send a test message" onSubmit={submit}>
      <h2>Send a test message</h2>
      <div class="field">
        <label for="channel-test-to">To (the platform's chat id)</label>
        <input id="channel-test-to" value={to} placeholder={fallback || 'chat id'} onInput={(e) => setTo(e.currentTarget.value)} />
      </div>
      <button type="submit" disabled={action.busy || (!to && !fallback)}>
        Send test
      </button>
      <ActionStatus action={action} />
    </form>
  );
}
