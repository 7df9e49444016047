import type { Store } from '@talon/module-sdk';

/** Remembers who was greeted (table from migrations/0001_greetings.sql). */
export class Greetings {
  constructor(private readonly store: Store) {}

  /** Records a greeting and counts this name's greetings, in one transaction so that the count includes it. */
  record(name: string): Promise<number> {
    return this.store.tx(async (t) => {
      await t.run('INSERT INTO hello_greetings (name, at) VALUES (?, ?)', [name, new Date().toISOString()]);
      const row = await t.one<{ n: number }>('SELECT COUNT(*) AS n FROM hello_greetings WHERE name = ?', [name]);
      return row!.n;
    });
  }
}
