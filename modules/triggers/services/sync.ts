/** The engine kept as stored: loaded at start, then following what other processes change (the change feed). */
import type { ChangeFeed } from '@talon/module-sdk';
import type { Engine } from './engine.ts';
import { TOPIC, type TriggerStore } from './store.ts';

export interface SyncDeps {
  engine: Engine;
  store: Pick<TriggerStore, 'all' | 'cooldowns'>;
  changes: Pick<ChangeFeed, 'on'>;
  /** Reads one trigger again into the engine (or drops it). */
  follow: (id: string) => Promise<void>;
}

/**
 * Subscribes first, then loads: a note that arrives during the load's reads is heard (subscribing after would drop it).
 * Such a note is applied after the load, which may have read the rows before that change and would undo it.
 */
export async function loadAndFollow({ engine, store, changes, follow }: SyncDeps): Promise<void> {
  const reload = async () => engine.load(await store.all(), await store.cooldowns());
  let loaded: Promise<void> | undefined;
  changes.on(TOPIC, async (id) => {
    await loaded;
    if (id) await follow(id);
    else await reload();
  });
  loaded = reload();
  await loaded;
}
