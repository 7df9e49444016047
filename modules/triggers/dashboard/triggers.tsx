/** Triggers: an agent gets a message when an event matches; list, pause or resume, delete, create. */
import { useState } from 'preact/hooks';
import { type AgentChoice, AgentPicker, api, ErrorText, fmtJson, Pager, seg, Table, useAction, useAgentNames, useApi, usePage } from '@talon/dashboard-kit';

interface Trigger {
  id: string;
  agent_id: string;
  pattern: unknown;
  prompt_template: string;
  enabled: boolean;
  fire_count: number;
  max_fires: number;
}

export default function TriggersView() {
  const triggers = useApi<Trigger[]>('/api/triggers');
  const action = useAction();
  const page = usePage(triggers.data ?? [], 50);
  const name = useAgentNames(page.items.map((t) => t.agent_id));
  const act = (fn: () => Promise<string>) =>
    void action.run(async () => {
      const done = await fn();
      await triggers.reload();
      return done;
    });
  return (
    <section>
      <h1>Triggers</h1>
      <ErrorText error={triggers.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <Table columns={['Agent', 'When', 'Message', 'Fired', { hidden: 'Actions' }]}>
        {page.items.map((t) => (
          <tr>
            <th scope="row">{name(t.agent_id)}</th>
            <td>
              <code>{fmtJson(t.pattern)}</code>
            </td>
            <td>{t.prompt_template}</td>
            <td>
              {t.fire_count}
              {t.max_fires > 0 && ` of ${t.max_fires}`}
              {!t.enabled && <div class="muted">paused</div>}
            </td>
            <td class="inline">
              <button
                type="button"
                onClick={() =>
                  act(
                    async () => (await api(`/api/triggers/${seg(t.id)}`, { method: 'PATCH', json: { enabled: !t.enabled } }), t.enabled ? 'Paused' : 'Resumed'),
                  )
                }
              >
                {t.enabled ? 'Pause' : 'Resume'}
              </button>
              <button type="button" class="danger" onClick={() => act(async () => (await api(`/api/triggers/${seg(t.id)}`, { method: 'DELETE' }), 'Deleted'))}>
                Delete
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="triggers" />
      <NewTrigger onCreated={() => void triggers.reload()} />
    </section>
  );
}

function NewTrigger({ onCreated }: { onCreated: () => void }) {
  const [agent, setAgent] = useState<AgentChoice>();
  const [pattern, setPattern] = useState('{"agent_spawned": {}}');
  const [prompt, setPrompt] = useState('Something happened: {{event}}');
  const action = useAction();
  return (
    <form
      class="card grid-form"
      onSubmit={action.submit(async () => {
        if (!agent) throw new Error('Choose the agent the trigger messages.');
        let parsed: unknown = pattern;
        try {
          parsed = JSON.parse(pattern);
        } catch {
          // a plain name such as "lifecycle"
        }
        await api('/api/triggers', { json: { agent_id: agent.id, pattern: parsed, prompt_template: prompt } });
        onCreated();
        return 'Trigger created';
      })}
    >
      <h2>New trigger</h2>
      <label for="trigger-agent">Agent</label>
      <AgentPicker id="trigger-agent" chosen={agent} onChoose={setAgent} />
      <label for="trigger-pattern">Event pattern (JSON, or a name such as lifecycle)</label>
      <input id="trigger-pattern" class="code" value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />
      <label for="trigger-prompt">Message ({'{{event}}'} becomes the event)</label>
      <textarea id="trigger-prompt" rows={2} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Create trigger
      </button>
    </form>
  );
}
