/**
 * A hand's settings: the values a person chose (stored per hand, so they survive a deactivation and apply to the
 * next activation as well as the live instance), typed by the hand's [[settings]] declarations. Undeclared keys are
 * kept and reported. Values of secret-looking keys (…_token, …_api_key) are never read back nor put in a prompt.
 * Held in memory (they join every model call of a hand's agents); a change is noted (topic SETTINGS) and the other
 * processes of the home read them again.
 */
import { badRequest, isSecretKey, REDACTED, type ChangeFeed, type Store } from '@talon/module-sdk';
import type { HandDefinition, HandSetting } from '@talon/hands';
import { optionViews } from './requirements.ts';

export type Values = Record<string, string>;
export const SETTINGS = 'settings';
const MAX_VALUE = 10_000;

const redact = (values: Values): Values => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, isSecretKey(k) && v ? REDACTED : v]));

function typed(setting: HandSetting, value: unknown): string {
  const where = `setting '${setting.key}'`;
  if (setting.setting_type === 'toggle') {
    if (typeof value === 'boolean') return String(value);
    if (value === 'true' || value === 'false') return value;
    throw badRequest(`${where} is a toggle: give true or false`);
  }
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') throw badRequest(`${where} takes a string`);
  if (text.length > MAX_VALUE) throw badRequest(`${where} is longer than ${MAX_VALUE} characters`);
  if (setting.setting_type === 'select' && !setting.options.some((o) => o.value === text))
    throw badRequest(`${where} must be one of ${setting.options.map((o) => `'${o.value}'`).join(', ')}; got '${text}'`);
  return text;
}

export class HandSettings {
  private byHand = new Map<string, Values>();

  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  /** Reads every hand's settings (start, and when another process changed some). */
  async load(): Promise<void> {
    const rows = await this.store.many<{ hand_id: string; settings: string }>('SELECT hand_id, settings FROM hands_settings');
    this.byHand = new Map(rows.map((r) => [r.hand_id, JSON.parse(r.settings) as Values]));
  }

  stored(handId: string): Values {
    return this.byHand.get(handId) ?? {};
  }

  /** Defaults, then the chosen values of declared keys. */
  effective(def: HandDefinition): Values {
    const stored = this.stored(def.id);
    return Object.fromEntries(def.settings.map((s) => [s.key, stored[s.key] ?? s.default]));
  }

  unknown(def: HandDefinition): Values {
    const declared = new Set(def.settings.map((s) => s.key));
    return Object.fromEntries(Object.entries(this.stored(def.id)).filter(([k]) => !declared.has(k)));
  }

  /** Applies a delta (null resets a key); 400 naming the first bad value. Nothing is written when one is bad. */
  async update(def: HandDefinition, patch: Record<string, unknown>): Promise<Values> {
    const next = this.check(def, patch);
    await this.store.tx(async (t) => {
      await t.run(
        'INSERT INTO hands_settings (hand_id, settings, updated_at) VALUES (?, ?, ?) ON CONFLICT (hand_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at',
        [def.id, JSON.stringify(next), new Date().toISOString()],
      );
      await this.changes.note(SETTINGS, def.id, t);
    });
    this.byHand.set(def.id, next);
    return next;
  }

  /** The values a delta would give; 400 naming the first bad value. */
  check(def: HandDefinition, patch: Record<string, unknown>): Values {
    const next = { ...this.stored(def.id) };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) {
        delete next[key];
        continue;
      }
      const setting = def.settings.find((s) => s.key === key);
      if (setting) next[key] = typed(setting, value);
      else if (['string', 'number', 'boolean'].includes(typeof value)) next[key] = String(value).slice(0, MAX_VALUE);
      else throw badRequest(`setting '${key}' is not declared by hand '${def.id}' and is not a string, number or boolean`);
    }
    return next;
  }

  async forget(handId: string): Promise<void> {
    await this.store.tx(async (t) => {
      await t.run('DELETE FROM hands_settings WHERE hand_id = ?', [handId]);
      await this.changes.note(SETTINGS, handId, t);
    });
    this.byHand.delete(handId);
  }

  view(def: HandDefinition) {
    return {
      hand_id: def.id,
      settings: def.settings.map((s) => ({ ...s, options: optionViews(s) })),
      current_values: redact(this.stored(def.id)),
      effective_values: redact(this.effective(def)),
      unknown_values: redact(this.unknown(def)),
    };
  }

  /** The block appended to the system prompt of the hand's agents. */
  promptBlock(def: HandDefinition): string {
    if (!def.settings.length) return '';
    const values = this.effective(def);
    const lines = def.settings.map((s) => {
      const v = values[s.key];
      const shown = isSecretKey(s.key) ? (v ? '(set; not shown)' : '(not set)') : v === '' ? '(empty)' : v;
      const label = s.options.find((o) => o.value === v)?.label;
      return `- ${s.label} (${s.key}): ${shown}${label && label !== v ? ` — ${label}` : ''}`;
    });
    return `## User Configuration\n${lines.join('\n')}`;
  }
}
