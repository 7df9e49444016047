/**
 * An agent's workspace (`#/files/<agent>/<path of a folder or a file>`): its folders and files from GET /api/agents/{id}/files (the
 * service lists files, so folders are the names' prefixes), a file read as text (shown as text, never markup) or,
 * when it is not text, offered as a download. Read-only: the write endpoint takes no checkpoint, and edits in the
 * dashboard would have to (docs/dashboard.md).
 */
import { useEffect, useState } from 'preact/hooks';
import {
  AgentPicker,
  download,
  ErrorText,
  fmtTime,
  href,
  navigate,
  Pager,
  plural,
  request,
  seg,
  Table,
  useAction,
  useAgentOrFirst,
  useApi,
  usePage,
  type ViewProps,
} from '@talon/dashboard-kit';

interface WorkspaceFile {
  name: string;
  size: number;
  modified_at: string;
}
interface Listing {
  files: WorkspaceFile[];
  total: number;
}
/** What a folder shows: its sub-folders (with the files below them) and its own files. */
interface Row {
  name: string;
  folder: boolean;
  size: number;
  modified_at?: string;
}

/** GET /api/agents/{id}/files stops at this many (modules/agents/routes/files.ts). */
const LISTED_AT_MOST = 1000;
/** Files up to this size are read for display; larger ones are offered as a download only. */
const SHOWN_AT_MOST = 1024 * 1024;

export default function FilesView({ params }: ViewProps) {
  const read = useAgentOrFirst(params[0]);
  const agentId = params[0] ?? read.agent?.id;
  return (
    <section>
      <h1>Workspace files</h1>
      <ErrorText error={read.error} />
      {read.none && <p>No agent yet: each agent has a workspace of its own.</p>}
      {agentId && (
        <>
          <AgentPicker id="files-agent" label="Agent" chosen={read.agent} onChoose={(a) => navigate('files', a.id)} />
          <Folder key={agentId} agentId={agentId} target={params[1] ?? ''} />
        </>
      )}
    </section>
  );
}

function rowsOf(files: WorkspaceFile[], folder: string): Row[] {
  const prefix = folder ? `${folder}/` : '';
  const folders = new Map<string, Row>();
  const own: Row[] = [];
  for (const f of files) {
    if (!f.name.startsWith(prefix)) continue;
    const rest = f.name.slice(prefix.length);
    const cut = rest.indexOf('/');
    if (cut < 0) own.push({ name: rest, folder: false, size: f.size, modified_at: f.modified_at });
    else {
      const name = rest.slice(0, cut);
      const row = folders.get(name) ?? { name, folder: true, size: 0 };
      row.size += f.size;
      folders.set(name, row);
    }
  }
  const byName = (a: Row, b: Row) => a.name.localeCompare(b.name);
  return [...[...folders.values()].sort(byName), ...own.sort(byName)];
}

function Folder({ agentId, target }: { agentId: string; target: string }) {
  const list = useApi<Listing>(`/api/agents/${seg(agentId)}/files`);
  // The path names a file (opened, in its folder) or a folder; the service lists only files.
  const opened = list.data?.files.find((f) => f.name === target);
  const folder = opened ? target.split('/').slice(0, -1).join('/') : target;
  const file = opened && target.split('/').pop();
  const rows = rowsOf(list.data?.files ?? [], folder);
  const page = usePage(rows, 100);
  const parts = folder ? folder.split('/') : [];
  return (
    <>
      <nav aria-label="Folder">
        <ol class="inline crumbs">
          <li>
            <a href={href('files', agentId)}>workspace</a>
          </li>
          {parts.map((p, i) => (
            <li>
              / <a href={href('files', agentId, parts.slice(0, i + 1).join('/'))}>{p}</a>
            </li>
          ))}
        </ol>
      </nav>
      <ErrorText error={list.error} />
      {list.data && !rows.length && <p>{folder ? 'No file in this folder.' : 'The workspace is empty.'}</p>}
      {list.data && list.data.total >= LISTED_AT_MOST && <p class="muted">The service lists the first {LISTED_AT_MOST} files of a workspace.</p>}
      <Table columns={['Name', 'Size', 'Changed']}>
        {page.items.map((r) => {
          const path = folder ? `${folder}/${r.name}` : r.name;
          return (
            <tr aria-current={!r.folder && r.name === file ? 'true' : undefined}>
              <th scope="row">
                <a href={href('files', agentId, path)}>
                  {r.name}
                  {r.folder && '/'}
                </a>
              </th>
              <td>{plural(r.size, 'byte')}</td>
              <td>{r.modified_at ? fmtTime(r.modified_at) : ''}</td>
            </tr>
          );
        })}
      </Table>
      <Pager {...page} label="entries" />
      {opened && <FileContent key={opened.name} agentId={agentId} file={opened} />}
    </>
  );
}

function FileContent({ agentId, file }: { agentId: string; file: WorkspaceFile }) {
  const url = `/api/agents/${seg(agentId)}/files/${seg(file.name)}`;
  const base = file.name.split('/').pop() ?? file.name;
  const read = useFileText(file.size <= SHOWN_AT_MOST ? url : null);
  const action = useAction();
  return (
    <section class="card" aria-labelledby="file-title">
      <h2 id="file-title">{file.name}</h2>
      <div class="toolbar">
        <span class="muted">
          {plural(file.size, 'byte')}, changed {fmtTime(file.modified_at)}
        </span>
        <button type="button" onClick={() => void action.run(async () => (await download(url, base), `Downloading ${base}`))}>
          Download
        </button>
        {action.done && <span role="status">{action.done}</span>}
      </div>
      <ErrorText error={read.error ?? action.error} />
      {file.size > SHOWN_AT_MOST && <p>This file is larger than 1 MiB: download it to read it.</p>}
      {read.content?.kind === 'binary' && <p>This is not a text file: download it to open it.</p>}
      {read.content?.kind === 'text' && (
        <pre class="file-text" tabIndex={0} aria-label={`Contents of ${file.name}`}>
          {read.content.text}
        </pre>
      )}
    </section>
  );
}

type Content = { kind: 'text'; text: string } | { kind: 'binary' };

/**
 * A workspace file's text. The service serves what it reads as text (the test it applies to attachments) as
 * text/plain and anything else as application/octet-stream: only the first is read into the page.
 */
function useFileText(url: string | null): { content?: Content; error?: unknown } {
  const [state, setState] = useState<{ content?: Content; error?: unknown }>({});
  useEffect(() => {
    if (!url) return;
    const abort = new AbortController();
    setState({});
    request(url, { signal: abort.signal })
      .then(async (res) => {
        if (!(res.headers.get('content-type') ?? '').startsWith('text/')) {
          // Not read: the download button fetches it when asked.
          await res.body?.cancel();
          return { kind: 'binary' } as const;
        }
        return { kind: 'text', text: await res.text() } as const;
      })
      .then(
        (content) => setState({ content }),
        (error: unknown) => abort.signal.aborted || setState({ error }),
      );
    return () => abort.abort();
  }, [url]);
  return state;
}
