/** Workflow definitions in the store. */
import { randomUUID } from 'node:crypto';
import { isUuid, type Store } from '@talon/module-sdk';
import type { Definition } from './definition.ts';

export interface StoredWorkflow extends Definition {
  id: string;
  created_at: string;
  updated_at: string;
}

interface Row {
  id: string;
  definition: string;
  created_at: string;
  updated_at: string;
}

export class WorkflowStore {
  constructor(private readonly store: Store) {}

  async create(def: Definition): Promise<StoredWorkflow> {
    const id = randomUUID();
    const at = new Date().toISOString();
    await this.store.run('INSERT INTO workflows_workflows (id, name, description, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
      id,
      def.name,
      def.description,
      JSON.stringify(def),
      at,
      at,
    ]);
    return { ...def, id, created_at: at, updated_at: at };
  }

  async get(id: string): Promise<StoredWorkflow | undefined> {
    const row = await this.store.one<Row>('SELECT id, definition, created_at, updated_at FROM workflows_workflows WHERE id = ?', [id]);
    return row && decode(row);
  }

  /** By UUID, else by name (case-insensitive; the oldest of that name). */
  async find(ref: string): Promise<StoredWorkflow | undefined> {
    if (isUuid(ref)) return this.get(ref.toLowerCase());
    // SQLite's NOCASE comparison uses the name index; PostgreSQL compares lowered names.
    const byName = this.store.pick({ sqlite: 'name = ? COLLATE NOCASE', postgres: 'LOWER(name) = LOWER(?)' });
    const row = await this.store.one<Row>(`SELECT id, definition, created_at, updated_at FROM workflows_workflows WHERE ${byName} ORDER BY seq LIMIT 1`, [ref]);
    return row && decode(row);
  }

  async list(): Promise<StoredWorkflow[]> {
    return (await this.store.many<Row>('SELECT id, definition, created_at, updated_at FROM workflows_workflows ORDER BY seq')).map(decode);
  }

  async update(id: string, def: Definition): Promise<StoredWorkflow | undefined> {
    const at = new Date().toISOString();
    const { changes } = await this.store.run('UPDATE workflows_workflows SET name = ?, description = ?, definition = ?, updated_at = ? WHERE id = ?', [
      def.name,
      def.description,
      JSON.stringify(def),
      at,
      id,
    ]);
    return changes ? this.get(id) : undefined;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.store.run('DELETE FROM workflows_workflows WHERE id = ?', [id])).changes > 0;
  }
}

function decode(row: Row): StoredWorkflow {
  const def = JSON.parse(row.definition) as Definition;
  // Definitions stored before steps had summarize and depends_on lack them.
  const steps = def.steps.map((s) => ({ ...s, summarize: s.summarize ?? false, depends_on: s.depends_on ?? [] }));
  return { ...def, steps, id: row.id, created_at: row.created_at, updated_at: row.updated_at };
}
