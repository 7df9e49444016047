import { prepared, type ModuleContext } from '@talon/module-sdk';

/** The database type from the SDK's context, as docs/modules.md says: a module needs no @types package for it. */
type Database = ModuleContext['db'];

/** Remembers who was greeted (table from migrations/0001_greetings.sql). */
export class Greetings {
  constructor(private readonly db: Database) {}

  record(name: string): number {
    prepared<[string, string]>(this.db, 'INSERT INTO hello_greetings (name, at) VALUES (?, ?)').run(name, new Date().toISOString());
    return prepared<[string], { n: number }>(this.db, 'SELECT COUNT(*) AS n FROM hello_greetings WHERE name = ?').get(name)!.n;
  }
}
