/** Changes an agent's model (PUT /api/agents/{id}/model) from the catalogue's ids and aliases. */
import { useState } from 'preact/hooks';
import { api, ErrorText, seg, useAction, useApi } from '@talon/dashboard-kit';

interface Models {
  models: { id: string; provider: string; aliases?: string[] }[];
}

export function ModelSwitch({ agentId, current, onChanged }: { agentId: string; current: string; onChanged: () => void }) {
  // The catalogue is large: read when the field is first used, not with the chat.
  const [wanted, setWanted] = useState(false);
  const models = useApi<Models>(wanted ? '/api/models' : null);
  const [value, setValue] = useState(current);
  const action = useAction();
  return (
    <form
      class="inline"
      onSubmit={action.submit(async () => {
        await api(`/api/agents/${seg(agentId)}/model`, { method: 'PUT', json: { model: value.trim() } });
        onChanged();
        return 'Model changed';
      })}
    >
      <label for="model-pick">Model</label>
      <input id="model-pick" list="model-ids" value={value} onFocus={() => setWanted(true)} onInput={(e) => setValue(e.currentTarget.value)} />
      <datalist id="model-ids">
        {models.data?.models.map((m) => (
          <option value={m.id}>{m.provider}</option>
        ))}
      </datalist>
      <button type="submit" disabled={action.busy || !value.trim() || value === current}>
        Switch
      </button>
      {action.done && <span role="status">{action.done}</span>}
      <ErrorText error={action.error} />
    </form>
  );
}
