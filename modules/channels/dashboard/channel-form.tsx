/**
 * The configure form: the common fields (the agent, the policies, who is always admitted, where tests go), the
 * adapter's own fields generated from its schema, and the secrets as password fields that are never filled in (the
 * service says only whether one is set; an empty box keeps it). Save posts the whole form; the adapter restarts.
 */
import { useState } from 'preact/hooks';
import { AgentPicker, api, ErrorText, seg, useAction } from '@talon/dashboard-kit';
import type { ChannelDetail, FieldSpec } from './channel-types.ts';

const DM_POLICIES = ['pairing', 'allowlist', 'open', 'disabled'];
const GROUP_POLICIES = ['mention', 'all', 'disabled'];
/** Comma- or space-separated lists in one text box. */
const LISTS = ['allowed_users', 'owners'];

type Values = Record<string, string>;

/** The form's text for a stored value: lists joined, booleans and numbers as written. */
const shown = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : v === undefined || v === null ? '' : String(v));
const split = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** A typed value for the body; text that is not a number goes as typed, so the service's 400 names the field. */
function typed(spec: FieldSpec, text: string): unknown {
  if (spec.type === 'array') return split(text);
  if (spec.type === 'boolean') return text === 'true';
  if ((spec.type === 'integer' || spec.type === 'number') && text.trim() !== '' && !Number.isNaN(Number(text))) return Number(text);
  return text;
}

export function ChannelForm({ channel, onSaved }: { channel: ChannelDetail; onSaved: () => Promise<void> }) {
  const own = Object.entries(channel.fields.properties).filter(([f]) => !channel.secret_fields.includes(f));
  const [values, setValues] = useState<Values>(() => ({
    dm_policy: 'pairing',
    group_policy: 'mention',
    ...Object.fromEntries(Object.entries(channel.config ?? {}).map(([k, v]) => [k, shown(v)])),
  }));
  const [secrets, setSecrets] = useState<Values>({});
  const action = useAction();
  const set = (field: string, value: string) => setValues((v) => ({ ...v, [field]: value }));
  const id = (field: string) => `channel-field-${field}`;

  const submit = action.submit(async () => {
    const body: Record<string, unknown> = { dm_policy: values.dm_policy, group_policy: values.group_policy };
    for (const f of LISTS) body[f] = split(values[f] ?? '');
    for (const f of ['agent_name', 'default_conversation']) if (values[f]?.trim()) body[f] = values[f].trim();
    const window = values.message_coalesce_window_ms?.trim();
    if (window) body.message_coalesce_window_ms = typed({ type: 'integer' }, window);
    for (const [f, spec] of own) if (values[f]?.trim()) body[f] = typed(spec, values[f].trim());
    for (const [f, v] of Object.entries(secrets)) if (v) body[f] = v;
    await api(`/api/channels/${seg(channel.name)}/configure`, { json: body });
    setSecrets({});
    await onSaved();
    return `Saved ${channel.name}: the adapter restarts with it`;
  });

  const text = (field: string, label: string, help?: string) => (
    <div class="field">
      <label for={id(field)}>{label}</label>
      <input
        id={id(field)}
        value={values[field] ?? ''}
        aria-describedby={help ? `${id(field)}-help` : undefined}
        onInput={(e) => set(field, e.currentTarget.value)}
      />
      {help && (
        <p class="muted" id={`${id(field)}-help`}>
          {help}
        </p>
      )}
    </div>
  );
  const choice = (field: string, label: string, options: string[], help?: string) => (
    <div class="field">
      <label for={id(field)}>{label}</label>
      <select id={id(field)} value={values[field] ?? ''} onChange={(e) => set(field, e.currentTarget.value)}>
        {options.map((o) => (
          <option value={o}>{o || 'default'}</option>
        ))}
      </select>
      {help && <p class="muted">{help}</p>}
    </div>
  );
  const secret = (field: string) => {
    const isSet = channel.secrets_set[field];
    return (
      <div class="field">
        <label for={id(field)}>
          {field === 'token' ? 'Token' : field} ({isSet ? 'set' : 'not set'})
        </label>
        <input
          id={id(field)}
          type="password"
          autocomplete="new-password"
          value={secrets[field] ?? ''}
          placeholder={isSet ? 'set: type to replace it' : 'not set'}
          onInput={(e) => setSecrets((s) => ({ ...s, [field]: e.currentTarget.value }))}
        />
      </div>
    );
  };
  return (
    <form class="grid-form card" aria-label={`Configure ${channel.name}`} onSubmit={submit}>
      <h2>Configuration</h2>
      {channel.secret_fields.map(secret)}
      {own.map(([f, spec]) =>
        spec.type === 'boolean'
          ? choice(f, f, ['', 'true', 'false'], spec.description)
          : spec.enum
            ? choice(f, f, ['', ...spec.enum.map(String)], spec.description)
            : text(f, `${f}${channel.fields.required?.includes(f) ? ' (required)' : ''}`, spec.description),
      )}
      <div class="field">
        <label for={id('agent_name')}>Agent</label>
        <AgentPicker
          id={id('agent_name')}
          chosen={values.agent_name ? { name: values.agent_name } : null}
          placeholder="The default agent"
          onChoose={(a) => set('agent_name', a.name)}
          onClear={() => set('agent_name', '')}
        />
      </div>
      {choice('dm_policy', 'Direct messages', DM_POLICIES, 'pairing: an unknown sender gets a code the owner approves here')}
      {choice('group_policy', 'Groups', GROUP_POLICIES, 'mention: only messages that mention the bot or reply to it')}
      {text('allowed_users', 'Always admitted (sender ids)', 'Separated by commas or spaces; admitted whatever the policies say')}
      {text('owners', 'Owners (chat ids for notices)')}
      {text('default_conversation', 'Default conversation', 'The chat id tests and background replies go to')}
      {text('message_coalesce_window_ms', 'Join bursts (ms)', "A sender's messages this close together are one turn; 0 or empty: off")}
      <button type="submit" class="primary" disabled={action.busy}>
        Save
      </button>
      <ErrorText error={action.error} />
      {action.done && <p role="status">{action.done}</p>}
    </form>
  );
}
