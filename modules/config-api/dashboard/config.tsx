/**
 * Configuration: a form generated from GET /api/config/schema, filled from GET /api/config (secrets redacted and
 * never shown back: a secret field is empty and only a new value is sent). Saving sends each changed key to
 * POST /api/config/set; the service validates it and says when a restart is needed.
 */
import { useMemo, useState } from 'preact/hooks';
import { api, ErrorText, useAction, useApi } from '@talon/dashboard-kit';
import { fromText, sectionsOf, toText, valueAt, type Field, type JsonSchema, type Section } from './config-schema.tsx';

export default function ConfigView() {
  const schema = useApi<JsonSchema>('/api/config/schema');
  const config = useApi<Record<string, unknown>>('/api/config');
  const [filter, setFilter] = useState('');
  const sections = useMemo(() => (schema.data ? sectionsOf(schema.data) : []), [schema.data]);
  const f = filter.toLowerCase();
  const shown = sections
    .map((s) => ({ ...s, fields: s.fields.filter((x) => !f || x.path.toLowerCase().includes(f) || (x.schema.description ?? '').toLowerCase().includes(f)) }))
    .filter((s) => s.fields.length);
  return (
    <section>
      <h1>Configuration</h1>
      <p class="muted">Changes are written to config.toml. Secrets are never shown; type a new value to replace one.</p>
      <p class="inline">
        <label for="config-filter">Find a setting</label>
        <input id="config-filter" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </p>
      <ErrorText error={schema.error ?? config.error} />
      {config.data &&
        shown.map((s) => (
          <SectionForm key={s.path} section={s} config={config.data!} open={Boolean(f) || s.path === ''} onSaved={() => void config.reload()} />
        ))}
    </section>
  );
}

function SectionForm({ section, config, open, onSaved }: { section: Section; config: Record<string, unknown>; open: boolean; onSaved: () => void }) {
  const initial = () => Object.fromEntries(section.fields.map((x) => [x.path, toText(x.kind, valueAt(config, x.path))]));
  const [texts, setTexts] = useState<Record<string, string>>(initial);
  const [errors, setErrors] = useState<Record<string, unknown>>({});
  const action = useAction();

  const save = () =>
    action.run(async () => {
      const before = initial();
      const changed = section.fields.filter((x) => texts[x.path] !== before[x.path] && !(x.kind === 'secret' && texts[x.path] === ''));
      const failed: Record<string, unknown> = {};
      const notes: string[] = [];
      for (const x of changed) {
        try {
          const r = await api<{ restart_required?: boolean }>('/api/config/set', { json: { path: x.path, value: fromText(x, texts[x.path]) } });
          notes.push(r.restart_required ? `${x.path} saved (takes effect after a restart)` : `${x.path} saved`);
        } catch (err) {
          failed[x.path] = err;
        }
      }
      setErrors(failed);
      if (notes.length) onSaved();
      if (Object.keys(failed).length)
        throw new Error(
          `${Object.keys(failed).length === 1 ? 'A setting was' : `${Object.keys(failed).length} settings were`} not saved; see the messages above.`,
        );
      return notes.length ? notes.join('; ') : 'Nothing changed';
    });

  return (
    <details class="card" open={open}>
      <summary>
        <strong>{section.title}</strong> {section.description && <span class="muted">— {section.description}</span>}
      </summary>
      <form
        class="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        {section.fields.map((x) => (
          <FieldInput field={x} text={texts[x.path]} error={errors[x.path]} onText={(t) => setTexts({ ...texts, [x.path]: t })} />
        ))}
        <ErrorText error={action.error} />
        {action.done && <p role="status">{action.done}</p>}
        <button type="submit" class="primary" disabled={action.busy}>
          Save {section.title}
        </button>
      </form>
    </details>
  );
}

function FieldInput({ field, text, error, onText }: { field: Field; text: string; error: unknown; onText: (t: string) => void }) {
  const id = `cfg-${field.path}`;
  const help = `${id}-help`;
  const common = { id, 'aria-describedby': help, 'aria-invalid': error ? ('true' as const) : undefined };
  const input = (() => {
    switch (field.kind) {
      case 'boolean':
        return <input type="checkbox" {...common} checked={text === 'true'} onChange={(e) => onText(String(e.currentTarget.checked))} />;
      case 'enum':
        return (
          <select {...common} value={text} onChange={(e) => onText(e.currentTarget.value)}>
            {field.schema.enum!.map((v) => (
              <option value={String(v)}>{String(v)}</option>
            ))}
          </select>
        );
      case 'integer':
      case 'number':
        return (
          <input
            type="number"
            step={field.kind === 'integer' ? 1 : 'any'}
            min={field.schema.minimum}
            max={field.schema.maximum}
            {...common}
            value={text}
            onInput={(e) => onText(e.currentTarget.value)}
          />
        );
      case 'secret':
        return (
          <input
            type="password"
            autocomplete="off"
            placeholder="(hidden) type a new value to replace it"
            {...common}
            value={text}
            onInput={(e) => onText(e.currentTarget.value)}
          />
        );
      case 'json':
        return <textarea class="code" rows={3} {...common} value={text} onInput={(e) => onText(e.currentTarget.value)} />;
      default:
        return <input type="text" {...common} value={text} onInput={(e) => onText(e.currentTarget.value)} />;
    }
  })();
  return (
    <div class="field">
      <label for={id}>{field.path}</label>
      {input}
      <span id={help} class="muted">
        {field.schema.description ?? ''}
        {field.kind === 'list' ? ' (comma-separated)' : ''}
      </span>
      <ErrorText error={error} />
    </div>
  );
}
