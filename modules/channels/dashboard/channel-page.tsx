/**
 * One channel: its state, counters and backlog, the configure form, enable/disable and remove (asked in place), a
 * test send, the QR sign-in where the adapter has one, pairing codes waiting for approval, and its journal problems.
 */
import { useState } from 'preact/hooks';
import { api, ConfirmButton, ErrorText, fmtTime, href, seg, useAction, useApi } from '@talon/dashboard-kit';
import { ChannelForm } from './channel-form.tsx';
import { JournalProblems } from './channel-journal.tsx';
import { PairingCodes } from './channel-pairing.tsx';
import { StateBadge, usePoll } from './channel-parts.tsx';
import { QrSignIn } from './channel-qr.tsx';
import type { ChannelDetail } from './channel-types.ts';

export function ChannelPage({ name }: { name: string }) {
  const path = `/api/channels/${seg(name)}`;
  const read = useApi<ChannelDetail>(path);
  usePoll(read.reload);
  const action = useAction();
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await read.reload();
      return done;
    });
  const c = read.data;
  return (
    <section>
      <p>
        <a href={href('channels')}>← Channels</a>
      </p>
      <h1>{name}</h1>
      <ErrorText error={read.error} />
      {!c && read.loading && <p class="loading">Loading…</p>}
      {c && (
        <>
          <p class="muted">{c.description}</p>
          <dl class="stats" aria-label="Connection">
            <div>
              <dt>State</dt>
              <dd>
                <StateBadge row={c} />
              </dd>
            </div>
            <div>
              <dt>Received</dt>
              <dd>{c.messages_received}</dd>
            </div>
            <div>
              <dt>Sent</dt>
              <dd>{c.messages_sent}</dd>
            </div>
            <div>
              <dt>Waiting</dt>
              <dd>{c.backlog.inbound + c.backlog.outbound}</dd>
            </div>
            <div>
              <dt>Failed or unknown</dt>
              <dd>{c.backlog.failed + c.backlog.unknown}</dd>
            </div>
          </dl>
          {c.source === 'config' && <p class="muted">Configured in config.toml ([channels.{name}]); a configuration saved here takes its place.</p>}
          {c.last_message_at && <p class="muted">Last message {fmtTime(c.last_message_at)}.</p>}
          {c.last_error && (
            <p class="warn" aria-label="Last error">
              Last error: {c.last_error}
            </p>
          )}
          {c.configured && (
            <div class="toolbar">
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  act(async () => {
                    await api(`${path}/${c.enabled ? 'disable' : 'enable'}`, { method: 'PUT' });
                    return `${name} ${c.enabled ? 'disabled' : 'enabled'}`;
                  })
                }
              >
                {c.enabled ? 'Disable' : 'Enable'}
              </button>
              {c.source === 'api' && (
                <ConfirmButton
                  label={`Remove the configuration of ${name}`}
                  confirm={`Remove ${name}'s configuration and token now`}
                  disabled={action.busy}
                  onConfirm={() => act(async () => (await api(`${path}/configure`, { method: 'DELETE' }), `Removed the configuration of ${name}`))}
                >
                  Remove
                </ConfirmButton>
              )}
            </div>
          )}
          <ErrorText error={action.error} />
          {action.done && <p role="status">{action.done}</p>}
          <ChannelForm channel={c} onSaved={read.reload} />
          {c.configured && <TestSend channel={c} />}
          {c.capabilities.qr && <QrSignIn name={name} onSignedIn={read.reload} />}
          <PairingCodes name={name} />
          <JournalProblems channel={name} />
        </>
      )}
    </section>
  );
}

function TestSend({ channel }: { channel: ChannelDetail }) {
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
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </form>
  );
}
