/**
 * The configure form: the common fields (the agent, the policies, who is always admitted, where tests go), the
 * adapter's own fields generated from its schema, and the secrets as password fields that are never filled in (the
 * service says only whether one is set; an empty box keeps it). Save posts the whole form; the adapter restarts.
 */
import { useState } from 'preact/hooks';
import { AgentPicker, api, seg, useAction } from '@talon/dashboard-kit';
import { ChoiceField, fieldId, SecretField, TextField } from './channel-fields.tsx';
import { ActionStatus } from './channel-parts.tsx';
import type { ChannelDetail, FieldSpec } from './channel-types.ts';

const DM_POLICIES = ['pairing', 'allowlist', 'open', 'disabled'];
const GROUP_POLICIES = ['mention', 'all', 'disabled'];
/** Comma- or space-separated lists in one text box. */
const LISTS = ['allowed_users', 'owners'];

type Values = Record<string, string>;
type Own = Array<[string, FieldSpec]>;
/** The form's values and how to change one. */
interface Form {
  values: Values;
  set: (field: string, value: string) => void;
}

/** The form's text for a stored value: lists joined, booleans and numbers as written. */
const shown = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : v === undefined || v === null ? '' : String(v));
const split = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** A typed value for the body; text that is not a number goes as typed, so the service's 400 names the field. */
function typed(spec: Pick<FieldSpec, 'type'>, text: string): unknown {
  if (spec.type === 'array') return split(text);
  if (spec.type === 'boolean') return text === 'true';
  if ((spec.type === 'integer' || spec.type === 'number') && text.trim() !== '' && !Number.isNaN(Number(text))) return Number(text);
  return text;
}

/** The configure body: the common fields, the adapter's own (typed by its schema), and the secrets typed in. */
function configureBody(values: Values, own: Own, secrets: Values): Record<string, unknown> {
  const body: Record<string, unknown> = { dm_policy: values.dm_policy, group_policy: values.group_policy };
  for (const f of LISTS) body[f] = split(values[f] ?? '');
  for (const f of ['agent_name', 'default_conversation']) if (values[f]?.trim()) body[f] = values[f].trim();
  const window = values.message_coalesce_window_ms?.trim();
  if (window) body.message_coalesce_window_ms = typed({ type: 'integer' }, window);
  for (const [f, spec] of own) if (values[f]?.trim()) body[f] = typed(spec, values[f].trim());
  for (const [f, v] of Object.entries(secrets)) if (v) body[f] = v;
  return body;
}

export function ChannelForm({ channel, onSaved }: { channel: ChannelDetail; onSaved: () => Promise<void> }) {
  const own: Own = Object.entries(channel.fields.properties).filter(([f]) => !channel.secret_fields.includes(f));
  const [values, setValues] = useState<Values>(() => ({
    dm_policy: 'pairing',
    group_policy: 'mention',
    ...Object.fromEntries(Object.entries(channel.config ?? {}).map(([k, v]) => [k, shown(v)])),
  }));
  const [secrets, setSecrets] = useState<Values>({});
  const action = useAction();
  const form: Form = { values, set: (field, value) => setValues((v) => ({ ...v, [field]: value })) };
  const submit = action.submit(async () => {
    await api(`/api/channels/${seg(channel.name)}/configure`, { json: configureBody(values, own, secrets) });
    setSecrets({});
    await onSaved();
    return `Saved ${channel.name}: the adapter restarts with it`;
  });
  return (
    <form class="grid-form card" aria-label={`Configure ${channel.name}`} onSubmit={submit}>
      <h2>Configuration</h2>
      {channel.secret_fields.map((f) => (
        <SecretField field={f} isSet={channel.secrets_set[f]} value={secrets[f] ?? ''} onChange={(value) => setSecrets((s) => ({ ...s, [f]: value }))} />
      ))}
      <AdapterFields channel={channel} own={own} form={form} />
      <CommonFields form={form} />
      <button type="submit" class="primary" disabled={action.busy}>
        Save
      </button>
      <ActionStatus action={action} />
    </form>
  );
}

/** The adapter's own fields, from its schema: booleans and enums as choices, the rest as text. */
function AdapterFields({ channel, own, form }: { channel: ChannelDetail; own: Own; form: Form }) {
  return (
    <>
      {own.map(([f, spec]) => {
        const props = { field: f, value: form.values[f] ?? '', onChange: (v: string) => form.set(f, v), help: spec.description };
        if (spec.type === 'boolean') return <ChoiceField {...props} label={f} options={['', 'true', 'false']} />;
        if (spec.enum) return <ChoiceField {...props} label={f} options={['', ...spec.enum.map(String)]} />;
        return <TextField {...props} label={`${f}${channel.fields.required?.includes(f) ? ' (required)' : ''}`} />;
      })}
    </>
  );
}

/** The fields every channel has: the agent, the policies, who is always admitted, owners, where tests go, bursts. */
function CommonFields({ form }: { form: Form }) {
  const { values, set } = form;
  const bind = (field: string) => ({ field, value: values[field] ?? '', onChange: (v: string) => set(field, v) });
  return (
    <>
      <div class="field">
        <label for={fieldId('agent_name')}>Agent</label>
        <AgentPicker
          id={fieldId('agent_name')}
          chosen={values.agent_name ? { name: values.agent_name } : null}
          placeholder="The default agent"
          onChoose={(a) => set('agent_name', a.name)}
          onClear={() => set('agent_name', '')}
        />
      </div>
      <ChoiceField {...bind('dm_policy')} label="Direct messages" options={DM_POLICIES} help="pairing: an unknown sender gets a code the owner approves here" />
      <ChoiceField {...bind('group_policy')} label="Groups" options={GROUP_POLICIES} help="mention: only messages that mention the bot or reply to it" />
      <TextField {...bind('allowed_users')} label="Always admitted (sender ids)" help="Separated by commas or spaces; admitted whatever the policies say" />
      <TextField {...bind('owners')} label="Owners (chat ids for notices)" />
      <TextField {...bind('default_conversation')} label="Default conversation" help="The chat id tests and background replies go to" />
      <TextField
        {...bind('message_coalesce_window_ms')}
        label="Join bursts (ms)"
        help="A sender's messages this close together are one turn; 0 or empty: off"
      />
    </>
  );
}
