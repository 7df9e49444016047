/**
 * Channels: every loaded adapter with its connection state (read again every few seconds: adapters connect and
 * reconnect in the background), and the journal's reply chunks that failed or whose outcome is unknown. A channel's
 * own page (#/channels/<name>) configures it. Platform text (errors, senders, messages) is shown as text only.
 */
import { ErrorText, href, plural, Table, useApi, type ViewProps } from '@talon/dashboard-kit';
import { ChannelPage } from './channel-page.tsx';
import { JournalProblems } from './channel-journal.tsx';
import { StateBadge, usePoll } from './channel-parts.tsx';
import type { ChannelRow } from './channel-types.ts';

export default function ChannelsView({ params }: ViewProps) {
  if (params[0]) return <ChannelPage name={params[0]} />;
  return <ChannelList />;
}

function ChannelList() {
  const list = useApi<{ channels: ChannelRow[]; total: number }>('/api/channels');
  usePoll(list.reload);
  const channels = list.data?.channels ?? [];
  const connected = channels.filter((c) => c.connected).length;
  return (
    <section>
      <h1>Channels</h1>
      <p class="muted">
        People reach the agents where they already talk. {list.data && `${plural(list.data.total, 'channel adapter')} loaded, ${connected} connected.`}
      </p>
      <ErrorText error={list.error} />
      {list.loading && !list.data && <p class="loading">Loading…</p>}
      {list.data && !channels.length && <p class="muted">No channel adapter is loaded: enable a channel-&lt;name&gt; module.</p>}
      {channels.length > 0 && (
        <Table columns={['Channel', 'State', 'Token', 'Last error']}>
          {channels.map((c) => (
            <tr>
              <th scope="row">
                <a href={href('channels', c.name)}>{c.name}</a>
              </th>
              <td>
                <StateBadge row={c} />
              </td>
              <td>{c.has_token ? 'set' : 'not set'}</td>
              <td>{c.last_error ? <span class="warn">{c.last_error}</span> : <span class="muted">none</span>}</td>
            </tr>
          ))}
        </Table>
      )}
      <JournalProblems />
    </section>
  );
}
