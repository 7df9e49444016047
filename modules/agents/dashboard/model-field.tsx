/**
 * The builder's model choice: the service's default model, then the models of each provider that can be used now
 * (its key is set, or it needs none); the providers that cannot are listed apart with the reason, so a person
 * knows what to set up instead of meeting the failure at the first chat.
 */
import { plural, useApi } from '@talon/dashboard-kit';

interface Provider {
  name: string;
  display_name: string;
  auth_status: 'configured' | 'no_key_needed' | 'missing';
  env_var?: string;
}
interface Model {
  id: string;
  provider: string;
  display_name: string;
}

const DEFAULT = JSON.stringify(['default', 'default']);

export function ModelField(props: { provider: string; model: string; onChange: (provider: string, model: string) => void; problem?: string }) {
  const providers = useApi<{ providers: Provider[] }>('/api/providers');
  const models = useApi<{ models: Model[] }>('/api/models');
  const usable = (providers.data?.providers ?? []).filter((p) => p.auth_status !== 'missing').sort((a, b) => a.display_name.localeCompare(b.display_name));
  const unusable = (providers.data?.providers ?? []).filter((p) => p.auth_status === 'missing');
  const byProvider = (name: string) => (models.data?.models ?? []).filter((m) => m.provider === name);
  const value = JSON.stringify([props.provider || 'default', props.model || 'default']);
  const listed = value === DEFAULT || usable.some((p) => byProvider(p.name).some((m) => JSON.stringify([p.name, m.id]) === value));
  return (
    <>
      <label for="builder-model">Model</label>
      <select
        id="builder-model"
        value={value}
        aria-invalid={props.problem ? 'true' : undefined}
        aria-describedby="builder-model-problem builder-model-help"
        onChange={(e) => {
          const [provider, model] = JSON.parse(e.currentTarget.value) as [string, string];
          props.onChange(provider, model);
        }}
      >
        <option value={DEFAULT}>The service's default model</option>
        {!listed && (
          <option value={value}>
            {props.provider}/{props.model} (as written)
          </option>
        )}
        {usable.map((p) => (
          <optgroup label={p.display_name}>
            {byProvider(p.name).map((m) => (
              <option value={JSON.stringify([p.name, m.id])}>{m.display_name}</option>
            ))}
          </optgroup>
        ))}
      </select>
      <div id="builder-model-problem">
        {props.problem && (
          <p class="error" role="alert">
            {props.problem}
          </p>
        )}
      </div>
      <details id="builder-model-help" class="muted">
        <summary>{plural(unusable.length, 'provider is', 'providers are')} not usable yet</summary>
        <ul>
          {unusable.map((p) => (
            <li>
              {p.display_name}: no API key — set {p.env_var ?? 'its key variable'} or store a key for it (Models & providers)
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}
