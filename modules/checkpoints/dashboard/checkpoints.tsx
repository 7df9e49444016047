/**
 * An agent's checkpoints (`#/checkpoints/<agent>/<commit>`): the snapshots taken before its file_write and apply_patch
 * calls, newest first; one of them with the files it changed, the unified diff (plain text with a class per line) and
 * restore, asked for in two steps (the files it overwrites are named before anything happens).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  AgentPicker,
  api,
  ErrorText,
  fmtTime,
  navigate,
  Pager,
  plural,
  seg,
  Table,
  useAction,
  useAgentOrFirst,
  useApi,
  useServerPage,
  type ViewProps,
} from '@talon/dashboard-kit';

interface Entry {
  commit: string;
  short: string;
  message: string;
  session_id: string | null;
  tool: string | null;
  path: string | null;
  timestamp: string;
}
interface Change {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'type_changed';
  additions: number | null;
  deletions: number | null;
}
interface Detail extends Entry {
  working_dir: string;
  parent: string | null;
  changes: Change[];
  files: string[];
  diff: string;
  diff_truncated: boolean;
}
interface Restored {
  restored: string[];
  safety_snapshot: string | null;
}

export default function CheckpointsView({ params }: ViewProps) {
  const read = useAgentOrFirst(params[0]);
  const agentId = params[0] ?? read.agent?.id;
  return (
    <section>
      <h1>Checkpoints</h1>
      <p class="muted">
        Before each file_write or apply_patch call the files the agent's tools wrote in its workspace are snapshotted; a restore brings a snapshot's files back.
      </p>
      <ErrorText error={read.error} />
      {read.none && <p>No agent yet: checkpoints are taken of agents' workspaces.</p>}
      {agentId && (
        <>
          <AgentPicker id="checkpoints-agent" label="Agent" chosen={read.agent} onChoose={(a) => navigate('checkpoints', a.id)} />
          <Snapshots key={agentId} agentId={agentId} chosen={params[1]} />
          {params[1] && <Checkpoint key={`${agentId}-${params[1]}`} agentId={agentId} commit={params[1]} />}
        </>
      )}
    </section>
  );
}

function Snapshots({ agentId, chosen }: { agentId: string; chosen?: string }) {
  const list = useServerPage<Entry[], Entry>(`/api/checkpoints?agent_id=${seg(agentId)}`, (items) => ({ items }));
  return (
    <>
      <h2>Snapshots</h2>
      <ErrorText error={list.error} />
      {list.data && !list.items.length && list.page === 0 && <p>No snapshot yet: this agent has written no file.</p>}
      <Table columns={['Taken', 'Before', 'Checkpoint', { hidden: 'Actions' }]}>
        {list.items.map((e) => (
          <tr aria-current={e.commit === chosen || e.short === chosen ? 'true' : undefined}>
            <td>{fmtTime(e.timestamp)}</td>
            <td>{e.tool === 'restore' ? 'a restore (the state it replaced)' : `${e.tool ?? 'a call'} ${e.path ?? ''}`}</td>
            <td>
              <code>{e.short}</code>
            </td>
            <td>
              <button type="button" class="small" aria-label={`Show checkpoint ${e.short}`} onClick={() => navigate('checkpoints', agentId, e.commit)}>
                Show
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...list} label="snapshots" />
    </>
  );
}

const STATUS: Record<Change['status'], string> = { added: 'added', modified: 'changed', deleted: 'deleted', type_changed: 'type changed' };

function Checkpoint({ agentId, commit }: { agentId: string; commit: string }) {
  const detail = useApi<Detail>(`/api/checkpoints/${seg(commit)}?agent_id=${seg(agentId)}`);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const d = detail.data;
  // The shell opens a new route at the top; the checkpoint shows below the snapshots, so it is brought into view.
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.scrollIntoView({ block: 'start' }), [commit]);
  const restore = (d: Detail) =>
    void action.run(async () => {
      setConfirming(false);
      const r = await api<Restored>('/api/checkpoints/restore', { json: { working_dir: d.working_dir, commit: d.commit } });
      const undo = r.safety_snapshot ? `; the state before is kept as checkpoint ${r.safety_snapshot.slice(0, 7)}` : '';
      return `Restored ${plural(r.restored.length, 'file')} from ${d.short}${undo}`;
    });
  return (
    <section ref={box} aria-labelledby="checkpoint-title" class="card">
      <h2 id="checkpoint-title">Checkpoint {d?.short ?? commit.slice(0, 7)}</h2>
      <ErrorText error={detail.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {d && (
        <>
          <p>
            Taken {fmtTime(d.timestamp)}, before {d.tool === 'restore' ? 'a restore' : `${d.tool ?? 'a call'} ${d.path ?? ''}`}
            {d.session_id && <span class="muted"> (session {d.session_id})</span>}.
          </p>
          <h3>{d.parent ? 'Changed since the checkpoint before' : 'Files (the oldest checkpoint kept)'}</h3>
          {d.changes.length ? (
            <Table columns={['File', 'Change', 'Lines']}>
              {d.changes.map((c) => (
                <tr>
                  <th scope="row">
                    <code>{c.path}</code>
                  </th>
                  <td>{STATUS[c.status]}</td>
                  <td>{c.additions === null ? 'binary' : `+${c.additions} −${c.deletions}`}</td>
                </tr>
              ))}
            </Table>
          ) : (
            <p class="muted">No file changed since the checkpoint before.</p>
          )}
          {d.diff && <Diff text={d.diff} />}
          {d.diff_truncated && <p class="muted">The diff is cut at 512 KiB.</p>}
          <h3>Restore</h3>
          {confirming ? (
            <div class="warn" role="group" aria-label="Confirm the restore">
              <p>
                This overwrites {plural(d.files.length, 'file')} in the workspace with their state in {d.short}:{' '}
                {d.files.map((f, i) => (
                  <>
                    {i > 0 && ', '}
                    <code>{f}</code>
                  </>
                ))}
                . Files created later stay; the current state is kept as a checkpoint first.
              </p>
              <div class="toolbar">
                <button type="button" class="primary" disabled={action.busy} onClick={() => restore(d)}>
                  Restore these files
                </button>
                <button type="button" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </div>
            </div>
          ) : (
            <button type="button" disabled={action.busy || !d.files.length} onClick={() => setConfirming(true)}>
              Restore this checkpoint…
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** The kind of a line of git's unified diff. */
function lineClass(line: string): string {
  if (/^(diff --git |index |--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode|Binary files )/.test(line)) return 'diff-meta';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-context';
}

/** The diff as text (never markup): one element per line, its kind as a class. */
function Diff({ text }: { text: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre class="diff" tabIndex={0} aria-label="Unified diff">
      {lines.map((line) => (
        <span class={`diff-line ${lineClass(line)}`}>{line + '\n'}</span>
      ))}
    </pre>
  );
}
