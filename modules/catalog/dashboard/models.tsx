/**
 * Models and providers: the default model (set through the config API, as the guided setup does); each provider with
 * where its key comes from, its media capabilities, a field to set or remove its key (never shown back) and a
 * connectivity test; the model catalogue, filterable and paged. Providers and models that can be used now (a key, or
 * none needed) come first.
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, fmtInt, type Loaded, Pager, seg, Table, useAction, useApi, useHasModule, usePage } from '@talon/dashboard-kit';

interface Provider {
  name: string;
  display_name: string;
  auth_status: 'configured' | 'no_key_needed' | 'missing';
  key_source: 'stored' | 'environment' | 'none';
  env_var?: string;
  key_required?: boolean;
  model_count: number;
  /** 'ImageGeneration', 'TextToSpeech'...: what the media module can ask of it. */
  media_capabilities?: string[];
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
interface DefaultModel {
  provider: string;
  model: string;
}

/** A provider can be used now: it has a key (stored or in the environment) or needs none. */
const usable = (p: Provider | undefined) => p !== undefined && p.auth_status !== 'missing';
/** Usable first: with a key, then needing none, then those without their key; by name within each. */
const RANK: Record<Provider['auth_status'], number> = { configured: 0, no_key_needed: 1, missing: 2 };

const MEDIA_WORDS: Record<string, string> = {
  ImageGeneration: 'images',
  TextToSpeech: 'speech',
  VideoGeneration: 'video',
  MusicGeneration: 'music',
  Transcription: 'transcription',
};
/** The provider's media capabilities in words ('images, speech'); empty when it has none. */
const mediaWords = (p: Provider) => (p.media_capabilities ?? []).map((c) => MEDIA_WORDS[c] ?? c).join(', ');

/** Where the provider's key comes from, in words. */
function keySource(p: Provider): string {
  if (p.key_source === 'stored') return 'a stored key';
  if (p.key_source === 'environment') return `the environment (${p.env_var ?? 'its variable'})`;
  if (p.auth_status === 'no_key_needed') return 'no key needed';
  return p.env_var ? `no key: store one, or set ${p.env_var}` : 'no key: store one';
}

export default function ModelsView() {
  const providers = useApi<{ providers: Provider[] }>('/api/providers');
  const models = useApi<{ models: Model[] }>('/api/models');
  const configurable = useHasModule('config-api');
  const config = useApi<{ default_model?: DefaultModel }>(configurable ? '/api/config' : null);
  const list = [...(providers.data?.providers ?? [])].sort((a, b) => RANK[a.auth_status] - RANK[b.auth_status] || a.display_name.localeCompare(b.display_name));
  const byName = new Map(list.map((p) => [p.name, p]));
  const current = config.data?.default_model;
  return (
    <section>
      <h1>Models &amp; providers</h1>
      {configurable && (
        <DefaultModelForm
          current={current}
          providers={list.filter(usable)}
          models={models.data?.models ?? []}
          error={config.error}
          onSet={() => void config.reload()}
        />
      )}
      <Providers list={list} error={providers.error} onChanged={() => void providers.reload()} />
      <Models models={models} byName={byName} current={current} />
    </section>
  );
}

/**
 * The default model: what an agent with provider "default" uses ([default_model] of config.toml). Saved as the guided
 * setup saves it (modules/system/dashboard/first-run.ts, setDefaultModel): with api_key_env and base_url emptied, so
 * the chosen provider's key and URL come from the catalog, not from settings made for an earlier default.
 */
function DefaultModelForm(props: { current?: DefaultModel; providers: Provider[]; models: Model[]; error: unknown; onSet: () => void }) {
  const { current, providers, models } = props;
  const [choice, setChoice] = useState('');
  const action = useAction();
  const value = (provider: string, model: string) => JSON.stringify([provider, model]);
  return (
    <form
      class="card inline"
      onSubmit={action.submit(async () => {
        const [provider, model] = JSON.parse(choice) as [string, string];
        await api('/api/config/set', { json: { path: 'default_model', value: { provider, model, api_key_env: '', base_url: '' } } });
        setChoice('');
        props.onSet();
        return `${provider}/${model} is the default model.`;
      })}
    >
      <h2>Default model</h2>
      <p data-testid="default-model">
        {current ? (
          <>
            Now: <code>{`${current.provider}/${current.model}`}</code>
          </>
        ) : (
          'Now: not read yet'
        )}
      </p>
      <label for="default-model">Make another the default</label>
      <select id="default-model" value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
        <option value="">Choose a model of a usable provider</option>
        {providers.map((p) => (
          <optgroup label={p.display_name}>
            {models
              .filter((m) => m.provider === p.name)
              .map((m) => (
                <option value={value(p.name, m.id)}>{m.display_name === m.id ? m.id : `${m.display_name} (${m.id})`}</option>
              ))}
          </optgroup>
        ))}
      </select>
      <button type="submit" disabled={!choice || action.busy}>
        Make it the default
      </button>
      {action.done && <span role="status">{action.done}</span>}
      <ErrorText error={action.error ?? props.error} />
    </form>
  );
}

function Providers({ list, error, onChanged }: { list: Provider[]; error: unknown; onChanged: () => void }) {
  const [filter, setFilter] = useState('');
  const shown = list.filter((p) => `${p.name} ${p.display_name} ${p.auth_status} ${mediaWords(p)}`.toLowerCase().includes(filter.toLowerCase()));
  const page = usePage(shown, 25);
  return (
    <>
      <h2>Providers</h2>
      <p class="muted">Those that can be used now come first: with a key, then those that need none.</p>
      <p class="inline">
        <label for="provider-filter">Filter providers</label>
        <input id="provider-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </p>
      <ErrorText error={error} />
      <Table columns={['Provider', 'Key from', 'Models', 'Set key / test']}>
        {page.items.map((p) => (
          <ProviderRow key={p.name} p={p} onChanged={onChanged} />
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
      <td data-testid="key-source">
        <span class={`badge ${usable(p) ? 'ok' : 'off'}`}>{usable(p) ? 'usable' : 'no key'}</span> <span>{keySource(p)}</span>
      </td>
      <td>
        {p.model_count}
        {mediaWords(p) && <div class="muted">media: {mediaWords(p)}</div>}
      </td>
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
          {p.key_source === 'stored' && (
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

function Models({ models, byName, current }: { models: Loaded<{ models: Model[] }>; byName: Map<string, Provider>; current?: DefaultModel }) {
  const [filter, setFilter] = useState('');
  const listed = models.data?.models ?? [];
  // Usable first, in the catalogue's order within each part (a stable sort).
  const ordered = [...listed].sort((a, b) => Number(usable(byName.get(b.provider))) - Number(usable(byName.get(a.provider))));
  const shown = ordered.filter((m) => `${m.id} ${m.provider} ${m.display_name} ${m.tier}`.toLowerCase().includes(filter.toLowerCase()));
  const page = usePage(shown, 50);
  return (
    <>
      <h2>Models</h2>
      <p class="muted">The models of providers that can be used now come first.</p>
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
              {current?.provider === m.provider && current.model === m.id && <span class="badge ok">default</span>}
              <div class="muted">{m.id}</div>
            </th>
            <td>
              {m.provider}
              {!usable(byName.get(m.provider)) && <div class="muted">no key</div>}
            </td>
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
