/** The configure form's fields: a text box, a choice, and a secret (a password box never filled in). */
import type { ComponentChildren } from 'preact';

/** The element id of a field's input. */
export const fieldId = (field: string) => `channel-field-${field}`;

interface FieldProps {
  field: string;
  label: ComponentChildren;
  value: string;
  onChange: (value: string) => void;
  help?: string;
}

export function TextField({ field, label, value, onChange, help }: FieldProps) {
  const id = fieldId(field);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} aria-describedby={help ? `${id}-help` : undefined} onInput={(e) => onChange(e.currentTarget.value)} />
      {help && (
        <p class="muted" id={`${id}-help`}>
          {help}
        </p>
      )}
    </div>
  );
}

/** A choice among `options` ('' shown as "default"). */
export function ChoiceField({ field, label, value, onChange, help, options }: FieldProps & { options: string[] }) {
  return (
    <div class="field">
      <label for={fieldId(field)}>{label}</label>
      <select id={fieldId(field)} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map((o) => (
          <option value={o}>{o || 'default'}</option>
        ))}
      </select>
      {help && <p class="muted">{help}</p>}
    </div>
  );
}

/** A secret: the service says only whether one is set; an empty box keeps it. */
export function SecretField({ field, isSet, value, onChange }: { field: string; isSet: boolean; value: string; onChange: (value: string) => void }) {
  return (
    <div class="field">
      <label for={fieldId(field)}>
        {field === 'token' ? 'Token' : field} ({isSet ? 'set' : 'not set'})
      </label>
      <input
        id={fieldId(field)}
        type="password"
        autocomplete="new-password"
        value={value}
        placeholder={isSet ? 'set: type to replace it' : 'not set'}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    </div>
  );
}
