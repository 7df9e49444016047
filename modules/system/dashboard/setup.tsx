/**
 * The guided first run: choose a provider (those with a key first, then local runtimes the service found), enter and
 * test its key, choose the default model, create a first agent from a template, and open its chat. Each step is a call
 * of first-run.ts, the same steps `talon init` takes in a terminal.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ErrorText, fmtInt, navigate, useAction, useApi, useHasModule, type RequestOptions } from '@talon/dashboard-kit';
import { modelChoices, setDefaultModel, spawnFromTemplate, storeKey, testProvider, type Call, type ProviderChoice, type Template } from './first-run.ts';

const call: Call = (path, init) => api(path, init as RequestOptions);

/** The modules the steps call; without one of them the setup names it instead of failing half-way. */
const NEEDED = ['catalog', 'config-api', 'agents', 'templates'];

/** Where the key would come from, in words. */
export function keyWords(c: ProviderChoice): string {
  const p = c.provider;
  if (p.key_source === 'stored') return 'a stored key';
  if (p.key_source === 'environment') return `the environment (${p.env_var})`;
  if (c.detected?.reachable) return `no key needed: a local runtime at ${c.detected.base_url}`;
  if (c.detected) return `a local runtime, not answering at ${c.detected.base_url}`;
  return p.key_required ? 'no key yet' : 'no key needed';
}

export function Setup({ choices }: { choices: ProviderChoice[] }) {
  const missing = NEEDED.filter((m) => !useHasModule(m));
  const [chosen, setChosen] = useState<ProviderChoice>();
  const [models, setModels] = useState<string[]>();
  const [modelSet, setModelSet] = useState<string>();
  if (missing.length) return <p class="warn">The guided setup needs these modules, which are not running: {missing.join(', ')}.</p>;
  return (
    <ol class="cards">
      <li class="card">
        <ProviderStep
          choices={choices}
          onChoose={(c) => {
            setChosen(c);
            setModels(undefined);
            setModelSet(undefined);
          }}
        />
      </li>
      {chosen && (
        <li class="card">
          <KeyStep key={chosen.provider.name} choice={chosen} onTested={setModels} />
        </li>
      )}
      {chosen && models && (
        <li class="card">
          <ModelStep key={chosen.provider.name} provider={chosen.provider.name} tested={models} onSet={setModelSet} />
        </li>
      )}
      {modelSet && (
        <li class="card">
          <AgentStep />
        </li>
      )}
    </ol>
  );
}

function ProviderStep({ choices, onChoose }: { choices: ProviderChoice[]; onChoose: (c: ProviderChoice) => void }) {
  const [name, setName] = useState(choices[0]?.provider.name ?? '');
  const groups: [string, ProviderChoice[]][] = [
    ['Ready', choices.filter((c) => c.ready)],
    ['Local runtimes', choices.filter((c) => !c.ready && c.detected)],
    ['Needs a key', choices.filter((c) => !c.ready && !c.detected)],
  ];
  const submit = (e: Event) => {
    e.preventDefault();
    const c = choices.find((x) => x.provider.name === name);
    if (c) onChoose(c);
  };
  return (
    <form class="grid-form" onSubmit={submit}>
      <h2>1. Choose a provider</h2>
      <label class="field">
        Provider
        <select id="setup-provider" value={name} onChange={(e) => setName((e.target as HTMLSelectElement).value)}>
          {groups
            .filter(([, list]) => list.length)
            .map(([label, list]) => (
              <optgroup label={label}>
                {list.map((c) => (
                  <option value={c.provider.name}>
                    {c.provider.display_name} — {keyWords(c)}
                  </option>
                ))}
              </optgroup>
            ))}
        </select>
      </label>
      <button type="submit">Use this provider</button>
    </form>
  );
}

function KeyStep({ choice, onTested }: { choice: ProviderChoice; onTested: (models: string[]) => void }) {
  const p = choice.provider;
  const [key, setKey] = useState('');
  const [source, setSource] = useState(keyWords(choice));
  const save = useAction();
  const test = useAction();
  const usesKey = p.key_required || p.env_var !== undefined;
  return (
    <div>
      <h2>2. {usesKey ? 'Enter and test its key' : 'Test it'}</h2>
      <p>
        {p.display_name}: {source}.
      </p>
      {usesKey && (
        <form
          class="inline"
          onSubmit={save.submit(async () => {
            await storeKey(call, p.name, key);
            setKey('');
            setSource('a stored key');
            return 'The key is stored (sealed; it is never shown back).';
          })}
        >
          <label class="field">
            API key
            <input id="setup-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" disabled={save.busy || !key.trim()}>
            Save the key
          </button>
        </form>
      )}
      <p role="status">{save.done}</p>
      <ErrorText error={save.error} />
      <button
        type="button"
        disabled={test.busy}
        onClick={() =>
          void test.run(async () => {
            const t = await testProvider(call, p.name);
            onTested(t.models);
            return `${p.display_name} answers${t.latency_ms !== undefined ? ` (${fmtInt(t.latency_ms)} ms)` : ''}.`;
          })
        }
      >
        Test the connection
      </button>
      <p role="status">{test.done}</p>
      <ErrorText error={test.error} />
    </div>
  );
}

function ModelStep({ provider, tested, onSet }: { provider: string; tested: string[]; onSet: (model: string) => void }) {
  const [list, setList] = useState<string[]>();
  const [model, setModel] = useState('');
  const load = useAction();
  const save = useAction();
  useEffect(() => {
    void load.run(async () => {
      const ids = await modelChoices(call, provider, tested);
      setList(ids);
      setModel(ids[0] ?? '');
    });
  }, []);
  return (
    <form
      class="grid-form"
      onSubmit={save.submit(async () => {
        await setDefaultModel(call, provider, model);
        onSet(model);
        return `${provider}/${model} is the default model.`;
      })}
    >
      <h2>3. Choose the default model</h2>
      <ErrorText error={load.error} />
      <label class="field">
        Model
        <select id="setup-model" value={model} onChange={(e) => setModel((e.target as HTMLSelectElement).value)}>
          {(list ?? []).map((id) => (
            <option value={id}>{id}</option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={save.busy || !model}>
        Make it the default
      </button>
      <p role="status">{save.done}</p>
      <ErrorText error={save.error} />
    </form>
  );
}

function AgentStep() {
  const list = useApi<{ templates: Template[] }>('/api/templates');
  const all = list.data?.templates ?? [];
  const [name, setName] = useState<string>();
  const chosen = name ?? (all.some((t) => t.name === 'assistant') ? 'assistant' : all[0]?.name);
  const spawn = useAction();
  return (
    <form
      class="grid-form"
      onSubmit={spawn.submit(async () => {
        if (!chosen) return;
        const id = await spawnFromTemplate(call, chosen);
        navigate('chat', id);
      })}
    >
      <h2>4. Create a first agent</h2>
      <ErrorText error={list.error} />
      <label class="field">
        Template
        <select id="setup-template" value={chosen} onChange={(e) => setName((e.target as HTMLSelectElement).value)}>
          {all.map((t) => (
            <option value={t.name}>
              {t.name} — {t.description}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={spawn.busy || !chosen}>
        Create it and open its chat
      </button>
      <ErrorText error={spawn.error} />
    </form>
  );
}
