/**
 * One channel: its state, counters and backlog, the configure form, enable/disable and remove (asked in place), a
 * test send, the QR sign-in where the adapter has one, pairing codes waiting for approval, and its journal problems.
 */
import { api, ConfirmButton, ErrorText, fmtTime, href, seg, useApi } from '@talon/dashboard-kit';
import { ChannelForm } from './channel-form.tsx';
import { JournalProblems } from './channel-journal.tsx';
import { PairingCodes } from './channel-pairing.tsx';
import { ActionStatus, StateBadge, usePoll, useReloadingAction } from './channel-parts.tsx';
import { QrSignIn } from './channel-qr.tsx';
import { TestSend } from './channel-test-send.tsx';
import type { ChannelDetail } from './channel-types.ts';

export function ChannelPage({ name }: { name: string }) {
  const read = useApi<ChannelDetail>(`/api/channels/${seg(name)}`);
  usePoll(read.reload);
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
          <ChannelStats channel={c} />
          <ChannelNotes channel={c} />
          <ChannelSwitches channel={c} reload={read.reload} />
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

/** The connection's state and counters. */
function ChannelStats({ channel: c }: { channel: ChannelDetail }) {
  const stats: Array<[string, number]> = [
    ['Received', c.messages_received],
    ['Sent', c.messages_sent],
    ['Waiting', c.backlog.inbound + c.backlog.outbound],
    ['Failed or unknown', c.backlog.failed + c.backlog.unknown],
  ];
  return (
    <dl class="stats" aria-label="Connection">
      <div>
        <dt>State</dt>
        <dd>
          <StateBadge row={c} />
        </dd>
      </div>
      {stats.map(([label, value]) => (
        <div>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Where the configuration comes from, the last message, and the last error (untrusted: shown as text). */
function ChannelNotes({ channel: c }: { channel: ChannelDetail }) {
  return (
    <>
      {c.source === 'config' && <p class="muted">Configured in config.toml ([channels.{c.name}]); a configuration saved here takes its place.</p>}
      {c.last_message_at && <p class="muted">Last message {fmtTime(c.last_message_at)}.</p>}
      {c.last_error && (
        <p class="warn" aria-label="Last error">
          Last error: {c.last_error}
        </p>
      )}
    </>
  );
}

/** Enable or disable a configured channel, and remove a configuration saved here (asked in place). */
function ChannelSwitches({ channel: c, reload }: { channel: ChannelDetail; reload: () => Promise<void> }) {
  const action = useReloadingAction(reload);
  const path = `/api/channels/${seg(c.name)}`;
  const toggle = () =>
    action.act(async () => {
      await api(`${path}/${c.enabled ? 'disable' : 'enable'}`, { method: 'PUT' });
      return `${c.name} ${c.enabled ? 'disabled' : 'enabled'}`;
    });
  return (
    <>
      {c.configured && (
        <div class="toolbar">
          <button type="button" disabled={action.busy} onClick={toggle}>
            {c.enabled ? 'Disable' : 'Enable'}
          </button>
          {c.source === 'api' && (
            <ConfirmButton
              label={`Remove the configuration of ${c.name}`}
              confirm={`Remove ${c.name}'s configuration and token now`}
              disabled={action.busy}
              onConfirm={() => action.act(async () => (await api(`${path}/configure`, { method: 'DELETE' }), `Removed the configuration of ${c.name}`))}
            >
              Remove
            </ConfirmButton>
          )}
        </div>
      )}
      <ActionStatus action={action} />
    </>
  );
}
