import type { Database, Statement } from 'better-sqlite3';
import { prepared } from '@talon/module-sdk';

/** The SDK's statement cache (`prepared`), with the row type of each statement spelled out. */
export function cachedPrepare(db: Database) {
  return function prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    return prepared<P>(db, sql) as unknown as Statement<P, R>;
  };
}
