/**
 * Skills and the hub: the installed skills (uninstall), installing from a source (folder, git URL, archive URL or a
 * registry name), and the hub registry to browse, search and install from, with its sync status.
 */
import { useEffect, useState } from 'preact/hooks';
import {
  api,
  ConfirmButton,
  ErrorText,
  fmtTime,
  type Loaded,
  Pager,
  SearchForm,
  seg,
  Table,
  useAction,
  useApi,
  useHasModule,
  usePage,
} from '@talon/dashboard-kit';

interface Skill {
  name: string;
  version: string;
  description: string;
  runtime: string;
  enabled: boolean;
  tools_count: number;
  source?: { type: string };
}
interface HubItem {
  kind: string;
  slug: string;
  name: string;
  description: string;
  version: string;
  author: string;
  category: string;
  installed: boolean;
}
interface HubPage {
  items: HubItem[];
  total: number;
  page: number;
  categories?: { name: string; count: number }[];
  offline: boolean;
  synced_at: string | null;
  error?: string;
}
interface SkillList {
  skills: Skill[];
  total: number;
  blocked?: { name: string; path: string; reason: string }[];
}
interface Installed {
  skill: string;
  version: string;
  warnings?: string[];
}

export default function SkillsView() {
  const skills = useApi<SkillList>('/api/skills');
  return (
    <section>
      <h1>Skills &amp; hub</h1>
      <InstalledSkills skills={skills} />
      <InstallFromSource onInstalled={() => void skills.reload()} />
      {useHasModule('hub') && <Hub onInstalled={() => void skills.reload()} />}
    </section>
  );
}

function InstalledSkills({ skills }: { skills: Loaded<SkillList> }) {
  const page = usePage(skills.data?.skills ?? [], 50);
  const action = useAction();
  return (
    <>
      <h2>Installed</h2>
      <ErrorText error={skills.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <Table columns={['Skill', 'Kind', 'Tools', 'Source', 'State', { hidden: 'Actions' }]}>
        {page.items.map((s) => (
          <tr>
            <th scope="row">
              {s.name} <span class="muted">{s.version}</span>
              <div class="muted">{s.description}</div>
            </th>
            <td>{s.runtime}</td>
            <td>{s.tools_count}</td>
            <td>{s.source?.type ?? '—'}</td>
            <td>
              <span class={`badge ${s.enabled ? 'ok' : 'off'}`}>{s.enabled ? 'enabled' : 'disabled'}</span>
            </td>
            <td>
              {s.source?.type.toLowerCase() !== 'bundled' && (
                <ConfirmButton
                  small
                  label={`Uninstall ${s.name}`}
                  confirm={`Uninstall ${s.name} now`}
                  onConfirm={() =>
                    void action.run(async () => {
                      await api('/api/skills/uninstall', { json: { name: s.name } });
                      await skills.reload();
                      return `Uninstalled ${s.name}`;
                    })
                  }
                >
                  Uninstall
                </ConfirmButton>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="skills" />
      {skills.data?.blocked?.map((b) => (
        <p class="error">
          Not loaded: {b.name} ({b.path}): {b.reason}
        </p>
      ))}
    </>
  );
}

function InstallFromSource({ onInstalled }: { onInstalled: () => void }) {
  const [source, setSource] = useState('');
  const action = useAction();
  return (
    <form
      class="card inline"
      onSubmit={action.submit(async () => {
        const r = await api<Installed>('/api/skills/install', { json: { source: source.trim() } });
        setSource('');
        onInstalled();
        return `Installed ${r.skill} ${r.version}${r.warnings?.length ? ` (${r.warnings.join('; ')})` : ''}`;
      })}
    >
      <label for="skill-source">Install from a folder, a git or .tar.gz URL, or a registry name</label>
      <input id="skill-source" required class="wide" value={source} onInput={(e) => setSource(e.currentTarget.value)} />
      <button type="submit" disabled={action.busy}>
        Install
      </button>
      {action.done && <span role="status">{action.done}</span>}
      <ErrorText error={action.error} />
    </form>
  );
}

function Hub({ onInstalled }: { onInstalled: () => void }) {
  const [query, setQuery] = useState('');
  const [category, setCategory] = useState('');
  const [page, setPage] = useState(1);
  const [size, setSize] = useState(0);
  const path = query ? `/api/hub/search?q=${seg(query)}&page=${page}` : `/api/hub/browse?page=${page}${category ? `&category=${seg(category)}` : ''}`;
  const hub = useApi<HubPage>(path);
  const action = useAction();
  const d = hub.data;
  // The registry's page size is its own setting: the first page tells it.
  useEffect(() => {
    if (d && page === 1 && d.items.length > size) setSize(d.items.length);
  }, [d]);
  const pages = d && size ? Math.max(1, Math.ceil(d.total / size)) : 1;
  const sync = () =>
    void action.run(async () => {
      const r = await api<{ hub: { offline: boolean } }>('/api/hub/sync', { method: 'POST' });
      await hub.reload();
      return r.hub.offline ? 'The registry still cannot be reached.' : 'Synced';
    });
  return (
    <>
      <h2>Hub</h2>
      {d?.offline && <HubOffline synced={d.synced_at} error={d.error} busy={action.busy} onRetry={sync} />}
      {d && !d.offline && (
        <p class="muted">
          Registry synced {fmtTime(d.synced_at)}{' '}
          <button type="button" class="small" disabled={action.busy} onClick={sync}>
            Sync now
          </button>
        </p>
      )}
      <SearchForm
        id="hub-search"
        label="Search the hub"
        onSearch={(text) => {
          setQuery(text);
          setPage(1);
        }}
      >
        {!query && d?.categories && d.categories.length > 0 && (
          <>
            <label for="hub-category">Category</label>
            <select
              id="hub-category"
              value={category}
              onChange={(e) => {
                setCategory(e.currentTarget.value);
                setPage(1);
              }}
            >
              <option value="">all</option>
              {d.categories.map((c) => (
                <option value={c.name}>
                  {c.name} ({c.count})
                </option>
              ))}
            </select>
          </>
        )}
      </SearchForm>
      <ErrorText error={hub.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <Table columns={['Entry', 'Kind', 'Category', { hidden: 'Actions' }]}>
        {d?.items.map((i) => (
          <tr>
            <th scope="row">
              {i.name} <span class="muted">{i.version}</span>
              <div class="muted">
                {i.description} {i.author && `· ${i.author}`}
              </div>
            </th>
            <td>{i.kind}</td>
            <td>{i.category}</td>
            <td>
              {i.installed ? (
                <span class="badge ok">installed</span>
              ) : (
                i.kind === 'skills' && (
                  <button
                    type="button"
                    disabled={action.busy}
                    aria-label={`Install ${i.name}`}
                    onClick={() =>
                      void action.run(async () => {
                        const r = await api<Installed>('/api/hub/install', { json: { slug: i.slug } });
                        await hub.reload();
                        onInstalled();
                        return `Installed ${r.skill} ${r.version}`;
                      })
                    }
                  >
                    Install
                  </button>
                )
              )}
            </td>
          </tr>
        ))}
      </Table>
      <Pager page={page - 1} pages={pages} setPage={(p) => setPage(p + 1)} total={d?.total} more={false} label="entries" />
    </>
  );
}

/**
 * The registry could not be read (the last sync failed): what that means for the list and what to do, in words; the
 * service's own message (a network or git error) is kept under "Details" for whoever fixes it.
 */
function HubOffline({ synced, error, busy, onRetry }: { synced: string | null; error?: string; busy: boolean; onRetry: () => void }) {
  return (
    <div class="card" data-testid="hub-offline">
      <p>
        <strong>The hub registry cannot be reached.</strong>{' '}
        {synced
          ? `The entries below are the copy read ${fmtTime(synced)}, and may be out of date.`
          : 'No copy of it has been read yet, so there is nothing to list or install from the hub.'}
      </p>
      <p>
        The service reads the registry itself, not this browser: check that the machine it runs on reaches the network, and that <code>[hub] registry_url</code>{' '}
        in the configuration names the registry (a git URL, a folder, or an index ending in .json). Then try again. Skills can still be installed from a folder
        or URL above.
      </p>
      {error && (
        <details>
          <summary>Details</summary>
          <code>{error}</code>
        </details>
      )}
      <button type="button" disabled={busy} onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
