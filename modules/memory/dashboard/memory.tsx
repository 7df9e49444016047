/** Memory of an agent: key-value entries (add, change, delete), semantic entries with search, and relations. */
import { useState } from 'preact/hooks';
import {
  AgentPicker,
  api,
  ErrorText,
  fmtJson,
  fmtTime,
  navigate,
  Pager,
  SearchForm,
  seg,
  Table,
  useAction,
  useAgentOrFirst,
  useApi,
  usePage,
  useServerPage,
  type ViewProps,
} from '@talon/dashboard-kit';

interface Entry {
  id: string;
  content: string;
  level: string;
  category: string | null;
  score: number;
  created_at: string;
}
interface Relation {
  id: string;
  subject: string;
  relation: string;
  object: string;
  confidence: number;
}

export default function MemoryView({ params }: ViewProps) {
  const read = useAgentOrFirst(params[0]);
  const agentId = params[0] ?? read.agent?.id;
  return (
    <section>
      <h1>Memory</h1>
      <ErrorText error={read.error} />
      {read.none && <p>No agent yet: memory belongs to agents.</p>}
      {agentId && (
        <>
          <AgentPicker id="memory-agent" label="Agent" chosen={read.agent} onChoose={(a) => navigate('memory', a.id)} />
          <KeyValues key={`kv-${agentId}`} agentId={agentId} />
          <Entries key={`e-${agentId}`} agentId={agentId} />
          <Relations key={`r-${agentId}`} agentId={agentId} />
        </>
      )}
    </section>
  );
}

function KeyValues({ agentId }: { agentId: string }) {
  const base = `/api/memory/agents/${seg(agentId)}/kv`;
  const kv = useApi<{ kv_pairs: { key: string; value: unknown }[] }>(base);
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const action = useAction();
  const page = usePage(kv.data?.kv_pairs ?? [], 50);
  return (
    <>
      <h2>Key-value memory</h2>
      <ErrorText error={kv.error ?? action.error} />
      <Table columns={['Key', 'Value', { hidden: 'Actions' }]}>
        {page.items.map((p) => (
          <tr>
            <th scope="row">{p.key}</th>
            <td>
              <pre>{fmtJson(p.value)}</pre>
            </td>
            <td>
              <button type="button" onClick={() => void action.run(async () => (await api(`${base}/${seg(p.key)}`, { method: 'DELETE' }), await kv.reload()))}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="keys" />
      <form
        class="inline"
        onSubmit={action.submit(async () => {
          let parsed: unknown = value;
          try {
            parsed = JSON.parse(value);
          } catch {
            // plain text is stored as a string
          }
          await api(`${base}/${seg(key.trim())}`, { method: 'PUT', json: { value: parsed } });
          setKey('');
          setValue('');
          await kv.reload();
        })}
      >
        <label for="kv-key">Key</label>
        <input id="kv-key" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <label for="kv-value">Value (JSON or text)</label>
        <input id="kv-value" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          Store
        </button>
      </form>
    </>
  );
}

function Entries({ agentId }: { agentId: string }) {
  const [search, setSearch] = useState('');
  // The list comes a page at a time; a search gives its best 50, ranked.
  const list = useServerPage<{ memories: Entry[]; total?: number }, Entry>(
    search ? null : `/api/memory/agents/${seg(agentId)}`,
    (d) => ({ items: d.memories, total: d.total }),
    25,
  );
  const found = useApi<{ results: Entry[] }>(search ? `/api/memory/agents/${seg(agentId)}/search?q=${seg(search)}&limit=50` : null);
  const searched = usePage(found.data?.results ?? [], 25);
  const page = search ? searched : list;
  return (
    <>
      <h2>Semantic memory</h2>
      <SearchForm id="memory-search" label="Search" onSearch={setSearch} />
      <ErrorText error={list.error ?? found.error} />
      <Table columns={['Content', 'Level', 'Category', 'Score', 'Created']}>
        {page.items.map((m) => (
          <tr>
            <td>{m.content}</td>
            <td>{m.level}</td>
            <td>{m.category ?? '—'}</td>
            <td>{m.score.toFixed(2)}</td>
            <td>{fmtTime(m.created_at)}</td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="entries" />
    </>
  );
}

function Relations({ agentId }: { agentId: string }) {
  const page = useServerPage<{ relations: Relation[]; total: number }, Relation>(
    `/api/memory/agents/${seg(agentId)}/relations`,
    (d) => ({ items: d.relations, total: d.total }),
    50,
  );
  return (
    <>
      <h2>Relations</h2>
      <ErrorText error={page.error} />
      <ul class="relations">
        {page.items.map((r) => (
          <li>
            <strong>{r.subject}</strong> {r.relation.replace(/_/g, ' ')} <strong>{r.object}</strong>{' '}
            <span class="muted">({Math.round(r.confidence * 100)}%)</span>
          </li>
        ))}
      </ul>
      <Pager {...page} label="relations" />
    </>
  );
}
