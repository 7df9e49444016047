/**
 * MCP servers: the connected servers with their state and tools (reconnect, remove), the catalogue of integrations
 * with where each entry comes from (shipped, the hub registry, a configured folder or URL) — install with the
 * credentials it needs (stored sealed, never shown back), uninstall, update it from the registry — and adding a
 * server by its command or URL.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ConfirmButton, ErrorText, Pager, plural, seg, Table, useAction, useApi, useHasModule, usePage } from '@talon/dashboard-kit';

interface Server {
  id: string;
  name: string;
  status: string;
  connected: boolean;
  source: string;
  template_id: string | null;
  tools: { name: string }[];
  last_error: string | null;
}
interface Extension {
  name: string;
  display_name: string;
  description: string;
  category: string;
  status: string;
  installed: boolean;
  tool_count: number;
  required_env: string[];
  /** 'builtin', 'registry:<name>', or the folder, URL or file it was read from. */
  source: string;
}
interface CatalogUpdate {
  parts?: { mcp?: { status: string; count: number; error?: string } };
}

/** Where a catalogue entry comes from, in words. */
const sourceText = (source: string) =>
  source === 'builtin' ? 'shipped' : source.startsWith('registry:') ? `${source.slice('registry:'.length)} registry` : source;
interface ExtensionInfo {
  setup_instructions: string;
  required_env: EnvSpec[];
}
interface EnvSpec {
  name: string;
  label: string;
  help: string;
  is_secret: boolean;
  get_url?: string;
}

/**
 * The servers' state is read again this often while the view is shown: the API has no stream of it (GET
 * /api/mcp/servers is a cheap in-memory listing), and a server connects, fails or reconnects in the background.
 */
const POLL_MS = 3000;

export default function McpView() {
  const servers = useApi<{ servers: Server[] }>('/api/mcp/servers');
  const extensions = useHasModule('extensions');
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void servers.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [servers.reload]);
  return (
    <section>
      <h1>MCP servers</h1>
      <Servers list={servers.data?.servers ?? []} error={servers.error} onChanged={() => void servers.reload()} />
      {extensions && <Catalogue onChanged={() => void servers.reload()} />}
      <AddServer onAdded={() => void servers.reload()} />
    </section>
  );
}

function Servers({ list, error, onChanged }: { list: Server[]; error: unknown; onChanged: () => void }) {
  const page = usePage(list, 50);
  const action = useAction();
  const act = (fn: () => Promise<unknown>, done: string) => void action.run(async () => (await fn(), onChanged(), done));
  return (
    <>
      <h2>Servers</h2>
      <ErrorText error={error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      {!list.length && <p>No MCP server is configured.</p>}
      {list.length > 0 && (
        <Table columns={['Server', 'State', 'Tools', { hidden: 'Actions' }]}>
          {page.items.map((s) => (
            <tr>
              <th scope="row">
                {s.name}
                <div class="muted">{s.source === 'config' ? 'config.toml' : s.template_id ? `catalogue: ${s.template_id}` : 'added here'}</div>
              </th>
              <td>
                <span class={`badge ${s.connected ? 'ok' : 'off'}`}>{s.status}</span>
                {s.last_error && <div class="error">{s.last_error}</div>}
              </td>
              <td>{s.tools.map((t) => t.name).join(', ') || '—'}</td>
              <td class="inline">
                <button
                  type="button"
                  class="small"
                  onClick={() => act(() => api(`/api/mcp/servers/${seg(s.id)}/reconnect`, { method: 'POST' }), `Reconnected ${s.name}`)}
                >
                  Reconnect
                </button>
                {s.source !== 'config' && (
                  <ConfirmButton
                    small
                    label={`Remove ${s.name}`}
                    confirm={`Remove ${s.name} now`}
                    onConfirm={() => act(() => api(`/api/mcp/servers/${seg(s.id)}`, { method: 'DELETE' }), `Removed ${s.name}`)}
                  >
                    Remove
                  </ConfirmButton>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {list.length > 0 && <Pager {...page} label="servers" />}
    </>
  );
}

function Catalogue({ onChanged }: { onChanged: () => void }) {
  const list = useApi<{ extensions: Extension[] }>('/api/extensions');
  const [filter, setFilter] = useState('');
  const shown = (list.data?.extensions ?? []).filter((e) =>
    `${e.name} ${e.display_name} ${e.category} ${e.description}`.toLowerCase().includes(filter.toLowerCase()),
  );
  const page = usePage(shown, 25);
  const update = useAction();
  return (
    <>
      <h2>Catalogue</h2>
      <p class="inline">
        <button
          type="button"
          disabled={update.busy}
          onClick={() =>
            void update.run(async () => {
              const mcp = (await api<CatalogUpdate>('/api/catalog/update', { method: 'POST' })).parts?.mcp;
              await list.reload();
              if (!mcp) return 'The hub module is not running: the catalogue holds the shipped and configured entries';
              if (mcp.status !== 'updated') throw new Error(mcp.error ?? 'the registry could not be read');
              return `Updated: ${plural(mcp.count, 'entry', 'entries')} from the hub registry`;
            })
          }
        >
          {update.busy ? 'Updating…' : 'Update from the registry'}
        </button>
        {update.done && <span role="status">{update.done}</span>}
      </p>
      <ErrorText error={update.error} />
      <p class="inline">
        <label for="ext-filter">Filter the catalogue</label>
        <input id="ext-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </p>
      <ErrorText error={list.error} />
      <ul class="cards grid">
        {page.items.map((e) => (
          <ExtensionCard
            key={e.name}
            e={e}
            onChanged={() => {
              void list.reload();
              onChanged();
            }}
          />
        ))}
      </ul>
      <Pager {...page} label="integrations" />
    </>
  );
}

function ExtensionCard({ e, onChanged }: { e: Extension; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const info = useApi<ExtensionInfo>(open ? `/api/extensions/${seg(e.name)}` : null);
  const [values, setValues] = useState<Record<string, string>>({});
  const action = useAction();
  return (
    <li class="card">
      <h3>
        {e.display_name} <span class={`badge ${e.status === 'ready' ? 'ok' : e.status === 'error' ? 'off' : ''}`}>{e.status}</span>
      </h3>
      <p>
        {e.description}{' '}
        <span class="muted">
          ({e.category} · {sourceText(e.source)})
        </span>
      </p>
      {e.installed ? (
        <ConfirmButton
          label={`Uninstall ${e.display_name}`}
          confirm={`Uninstall ${e.display_name} and its credentials`}
          disabled={action.busy}
          onConfirm={() =>
            void action.run(async () => (await api('/api/extensions/uninstall', { json: { name: e.name } }), onChanged(), `Uninstalled ${e.display_name}`))
          }
        >
          Uninstall
        </ConfirmButton>
      ) : (
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          Install…
        </button>
      )}
      {open && !e.installed && info.data && (
        <form
          class="grid-form"
          onSubmit={action.submit(async () => {
            await api('/api/extensions/install', { json: { name: e.name, credentials: values } });
            setValues({});
            setOpen(false);
            onChanged();
            return `Installed ${e.display_name}: it connects in the background`;
          })}
        >
          {info.data.setup_instructions && <p class="muted">{info.data.setup_instructions}</p>}
          {info.data.required_env.map((v) => (
            <>
              <label for={`env-${e.name}-${v.name}`}>
                {v.label} ({v.name})
              </label>
              <input
                id={`env-${e.name}-${v.name}`}
                type={v.is_secret ? 'password' : 'text'}
                autocomplete="off"
                value={values[v.name] ?? ''}
                onInput={(ev) => setValues({ ...values, [v.name]: ev.currentTarget.value })}
              />
              {v.help && <span class="muted">{v.help}</span>}
            </>
          ))}
          <button type="submit" class="primary" disabled={action.busy}>
            Install {e.display_name}
          </button>
        </form>
      )}
      {action.done && <p role="status">{action.done}</p>}
      <ErrorText error={action.error ?? info.error} />
    </li>
  );
}

/** A name that holds a secret by its look (API_KEY, GITHUB_TOKEN, DB_PASSWORD, Authorization…): its value is hidden. */
const SECRET_NAME = /key|token|secret|password|passwd|auth|credential|cookie/i;

interface EnvRow {
  name: string;
  value: string;
  secret: boolean;
  /** The secret mark was set by hand: it no longer follows the name. */
  manual: boolean;
}

function AddServer({ onAdded }: { onAdded: () => void }) {
  const [form, setForm] = useState({ name: '', target: '' });
  const [rows, setRows] = useState<EnvRow[]>([]);
  const action = useAction();
  const isUrl = /^https?:\/\//.test(form.target.trim());
  // A stdio server is given environment variables; a server at a URL, request headers (the API's env and headers).
  const what = isUrl ? 'Header' : 'Variable';
  const setRow = (i: number, change: Partial<EnvRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));
  return (
    <form
      class="card grid-form"
      onSubmit={action.submit(async () => {
        const target = form.target.trim();
        const pairs = Object.fromEntries(rows.filter((r) => r.name.trim()).map((r) => [r.name.trim(), r.value]));
        const transport = isUrl ? { type: 'http', url: target } : { type: 'stdio', command: target.split(/\s+/)[0], args: target.split(/\s+/).slice(1) };
        await api('/api/mcp/servers', { json: { name: form.name.trim(), transport, ...(isUrl ? { headers: pairs } : { env: pairs }) } });
        setForm({ name: '', target: '' });
        setRows([]);
        onAdded();
        return 'Added: it connects in the background';
      })}
    >
      <h2>Add a server</h2>
      <label for="mcp-name">Name</label>
      <input id="mcp-name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <label for="mcp-target">Command with its arguments (stdio), or an http(s) URL</label>
      <input id="mcp-target" required class="code" value={form.target} onInput={(e) => setForm({ ...form, target: e.currentTarget.value })} />
      <fieldset class="env-rows">
        <legend>{isUrl ? 'Request headers' : 'Environment variables'} (stored sealed, never shown back)</legend>
        {rows.map((r, i) => (
          <div class="inline" role="group" aria-label={`${what} ${i + 1}`}>
            <label for={`mcp-env-name-${i}`}>{what} name</label>
            <input
              id={`mcp-env-name-${i}`}
              class="code"
              value={r.name}
              onInput={(e) => {
                const name = e.currentTarget.value;
                // The secret mark follows the name until it is set by hand.
                setRow(i, { name, secret: r.manual ? r.secret : SECRET_NAME.test(name) });
              }}
            />
            <label for={`mcp-env-value-${i}`}>Value</label>
            <input
              id={`mcp-env-value-${i}`}
              type={r.secret ? 'password' : 'text'}
              autocomplete="off"
              value={r.value}
              onInput={(e) => setRow(i, { value: e.currentTarget.value })}
            />
            <label>
              <input type="checkbox" checked={r.secret} onChange={(e) => setRow(i, { secret: e.currentTarget.checked, manual: true })} /> Secret
            </label>
            <button type="button" class="small" aria-label={`Remove ${what.toLowerCase()} ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        ))}
        <button type="button" class="small" onClick={() => setRows([...rows, { name: '', value: '', secret: false, manual: false }])}>
          Add {isUrl ? 'a header' : 'a variable'}
        </button>
      </fieldset>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Add server
      </button>
    </form>
  );
}
