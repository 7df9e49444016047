/**
 * Models and providers: each provider's key status with a field to set or remove its key (never shown back) and a
 * connectivity test; the model catalogue, filterable and paged.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtInt, Pager, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Provider {
  name: string;
  display_name: string;
  auth_status: string;
  env_var?: string;
  key_required?: boolean;
  model_count: number;
}
interface Model {
  id: string;
  provider: string;
  display_name: string;
  tier: string;
  context_window: number;
  input_cost_per_1m: number;
  output_cost_per_1m: number;
  supports_tools: boolean;
  supports_vision: boolean;
}

export default function ModelsView() {
  return (
    <section>
      <h1>Models &amp; providers</h1>
      <Providers />
      <Models />
    </section>
  );
}

function Providers() {
  const providers = useApi<{ providers: Provider[] }>('/api/providers');
  const [filter, setFilter] = useState('');
  const shown = (providers.data?.providers ?? []).filter((p) => `${p.name} ${p.display_name} ${p.auth_status}`.toLowerCase().includes(filter.toLowerCase()));
  const page = usePage(shown, 25);
  return (
    <>
      <h2>Providers</h2>
      <p class="inline">
        <label for="provider-filter">Filter providers</label>
        <input id="provider-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </p>
      <ErrorText error={providers.error} />
      <Table columns={['Provider', 'Key', 'Models', 'Set key / test']}>
        {page.items.map((p) => (
          <ProviderRow key={p.name} p={p} onChanged={() => void providers.reload()} />
        ))}
      </Table>
      <Pager {...page} label="providers" />
    </>
  );
}

function ProviderRow({ p, onChanged }: { p: Provider; onChanged: () => void }) {
  const [key, setKey] = useState('');
  const action = useAction();
  const base = `/api/providers/${seg(p.name)}`;
  return (
    <tr>
      <th scope="row">
        {p.display_name}
        <div class="muted">{p.name}</div>
      </th>
      <td>
        <span class={`badge auth-${p.auth_status}`}>{p.auth_status}</span>
        {p.env_var && <div class="muted">{p.env_var}</div>}
      </td>
      <td>{p.model_count}</td>
      <td>
        <form
          class="inline"
          onSubmit={action.submit(async () => {
            await api(`${base}/key`, { json: { api_key: key } });
            setKey('');
            onChanged();
            return 'Key saved';
          })}
        >
          <label for={`key-${p.name}`} class="sr-only">
            API key for {p.display_name}
          </label>
          <input id={`key-${p.name}`} type="password" autocomplete="off" placeholder="New key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
          <button type="submit" disabled={!key || action.busy}>
            Save
          </button>
          <button
            type="button"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                const r = await api<{ latency_ms: number; model_tested: string }>(`${base}/test`, { method: 'POST' });
                return `OK: ${r.model_tested} answered in ${fmtInt(r.latency_ms)} ms`;
              })
            }
          >
            Test
          </button>
          {p.auth_status === 'configured' && (
            <button
              type="button"
              disabled={action.busy}
              onClick={() =>
                void action.run(async () => {
                  await api(`${base}/key`, { method: 'DELETE' });
                  onChanged();
                  return 'Key removed';
                })
              }
            >
              Remove key
            </button>
          )}
        </form>
        {action.done && <span role="status">{action.done}</span>}
        <ErrorText error={action.error} />
      </td>
    </tr>
  );
}

function Models() {
  const models = useApi<{ models: Model[] }>('/api/models');
  const [filter, setFilter] = useState('');
  const shown = (models.data?.models ?? []).filter((m) => `${m.id} ${m.provider} ${m.display_name} ${m.tier}`.toLowerCase().includes(filter.toLowerCase()));
  const page = usePage(shown, 50);
  return (
    <>
      <h2>Models</h2>
      <p class="inline">
        <label for="model-filter">Filter models</label>
        <input id="model-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </p>
      <ErrorText error={models.error} />
      <Table columns={['Model', 'Provider', 'Tier', 'Context', '$ in / out per 1M', 'Tools / vision']}>
        {page.items.map((m) => (
          <tr>
            <th scope="row">
              {m.display_name}
              <div class="muted">{m.id}</div>
            </th>
            <td>{m.provider}</td>
            <td>{m.tier}</td>
            <td>{fmtInt(m.context_window)}</td>
            <td>
              {m.input_cost_per_1m} / {m.output_cost_per_1m}
            </td>
            <td>
              {m.supports_tools ? 'tools' : '—'} {m.supports_vision ? 'vision' : ''}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="models" />
    </>
  );
}
