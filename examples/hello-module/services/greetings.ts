import type { Database } from 'better-sqlite3';

/** Remembers who was greeted (table from migrations/0001_greetings.sql). */
export class Greetings {
  constructor(private readonly db: Database) {}

  record(name: string): number {
    this.db.prepare('INSERT INTO hello_greetings (name, at) VALUES (?, ?)').run(name, new Date().toISOString());
    return (this.db.prepare('SELECT COUNT(*) AS n FROM hello_greetings WHERE name = ?').get(name) as { n: number }).n;
  }
}
