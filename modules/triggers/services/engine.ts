/**
 * The trigger engine: every trigger compiled and indexed by the event types its pattern can match, so an event is
 * checked only against its candidates. match() decides (enabled, max_fires, pattern, cooldown per subject, the
 * per-event budget) without side effects; the caller records each fire.
 */
import type { KnownEvent } from './known.ts';
import { describeEvent } from './describe.ts';
import { compile, type Matcher, type MatchContext, type Owner } from './pattern.ts';
import type { Trigger } from './store.ts';

interface Entry {
  trigger: Trigger;
  matcher: Matcher;
}

export interface Match {
  trigger: Trigger;
  /** What the cooldown is keyed on. */
  subject: string;
}

export interface EngineOptions {
  defaultCooldownSecs: () => number;
  maxPerEvent: () => number;
  /** The name of an agent (for assignee_match 'self'). */
  agentName: (id: string) => string | undefined;
  onBudgetExceeded?: (event: KnownEvent, skipped: number) => void;
  onMatchError?: (trigger: Trigger, err: unknown) => void;
}

export class Engine {
  private readonly entries = new Map<string, Entry>();
  private index?: Map<string, Entry[]>;
  private readonly stamps = new Map<string, number>();

  constructor(private readonly options: EngineOptions) {}

  load(triggers: Trigger[], stamps: Array<{ trigger_id: string; subject: string; fired_at: number }>): void {
    this.entries.clear();
    for (const t of triggers) this.entries.set(t.id, { trigger: t, matcher: compile(t.pattern) });
    for (const s of stamps) this.stamps.set(key(s.trigger_id, s.subject), s.fired_at);
    this.index = undefined;
  }

  /** A trigger was created or changed (a changed pattern drops its stamps). */
  put(trigger: Trigger, patternChanged = false): void {
    this.entries.set(trigger.id, { trigger, matcher: compile(trigger.pattern) });
    if (patternChanged) this.dropStamps(trigger.id);
    this.index = undefined;
  }

  remove(id: string): void {
    this.entries.delete(id);
    this.dropStamps(id);
    this.index = undefined;
  }

  /**
   * Another process changed a trigger (undefined: deleted): the engine takes it as stored; a changed pattern drops
   * the stamps kept here, as the store dropped its own.
   */
  follow(id: string, stored: Trigger | undefined): void {
    if (!stored) return this.remove(id);
    const known = this.entries.get(id)?.trigger;
    this.put(stored, known !== undefined && JSON.stringify(known.pattern) !== JSON.stringify(stored.pattern));
  }

  get size(): number {
    return this.entries.size;
  }

  /** The triggers this event fires now. */
  match(event: KnownEvent, now = Date.now()): Match[] {
    const index = this.index ?? this.build();
    const candidates = [...(index.get(event.type) ?? []), ...(index.get('*') ?? [])];
    let description: string | undefined;
    const describe = () => (description ??= describeEvent(event));
    const fired: Match[] = [];
    let skipped = 0;
    for (const { trigger, matcher } of candidates) {
      if (!trigger.enabled || (trigger.max_fires > 0 && trigger.fire_count >= trigger.max_fires)) continue;
      const subject = this.subject(trigger, matcher, event, describe);
      if (subject === undefined || this.cooling(trigger, subject, now)) continue;
      if (fired.length >= this.options.maxPerEvent()) skipped++;
      else fired.push({ trigger, subject });
    }
    if (skipped) this.options.onBudgetExceeded?.(event, skipped);
    return fired;
  }

  /** Notes a fire: the stamp for its subject and the trigger as it is now stored. */
  fired(match: Match, at: number, updated: Trigger | undefined): void {
    this.stamps.set(key(match.trigger.id, match.subject), at);
    if (updated) this.put(updated);
  }

  /** What the trigger matches the event on; a matcher that throws counts as no match (reported), never stopping the others. */
  private subject(trigger: Trigger, matcher: Matcher, event: KnownEvent, description: () => string): string | undefined {
    try {
      const ctx: MatchContext = { owner: this.owner(trigger), description };
      return matcher.match(event, ctx);
    } catch (err) {
      this.options.onMatchError?.(trigger, err);
      return undefined;
    }
  }

  private cooling(t: Trigger, subject: string, now: number): boolean {
    const secs = t.cooldown_secs ?? this.options.defaultCooldownSecs();
    if (secs <= 0) return false;
    const last = this.stamps.get(key(t.id, subject));
    // A stamp in the future (the clock went back) does not hold the trigger.
    return last !== undefined && last <= now && now - last < secs * 1000;
  }

  private owner(t: Trigger): Owner {
    return { id: t.agent_id, name: this.options.agentName(t.agent_id) };
  }

  private build(): Map<string, Entry[]> {
    const index = new Map<string, Entry[]>();
    for (const entry of this.entries.values()) {
      for (const type of entry.matcher.types) {
        const list = index.get(type);
        if (list) list.push(entry);
        else index.set(type, [entry]);
      }
    }
    this.index = index;
    return index;
  }

  private dropStamps(id: string): void {
    const prefix = `${id}\u0000`;
    for (const k of this.stamps.keys()) if (k.startsWith(prefix)) this.stamps.delete(k);
  }
}

const key = (id: string, subject: string) => `${id}\u0000${subject}`;
