/** Workflow definitions in SQLite. */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { isUuid, statements } from '@talon/module-sdk';
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
  private readonly sql: ReturnType<typeof statements>;

  constructor(db: Database) {
    this.sql = statements(db);
  }

  create(def: Definition): StoredWorkflow {
    const id = randomUUID();
    const at = new Date().toISOString();
    this.sql('INSERT INTO workflows_workflows (id, name, description, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      id,
      def.name,
      def.description,
      JSON.stringify(def),
      at,
      at,
    );
    return { ...def, id, created_at: at, updated_at: at };
  }

  get(id: string): StoredWorkflow | undefined {
    const row = this.sql<[string], Row>('SELECT id, definition, created_at, updated_at FROM workflows_workflows WHERE id = ?').get(id);
    return row && decode(row);
  }

  /** By UUID, else by name (case-insensitive; the oldest of that name). */
  find(ref: string): StoredWorkflow | undefined {
    if (isUuid(ref)) return this.get(ref.toLowerCase());
    const row = this.sql<[string], Row>(
      'SELECT id, definition, created_at, updated_at FROM workflows_workflows WHERE name = ? COLLATE NOCASE ORDER BY seq LIMIT 1',
    ).get(ref);
    return row && decode(row);
  }

  list(): StoredWorkflow[] {
    return this.sql<[], Row>('SELECT id, definition, created_at, updated_at FROM workflows_workflows ORDER BY seq').all().map(decode);
  }

  update(id: string, def: Definition): StoredWorkflow | undefined {
    const at = new Date().toISOString();
    const changed = this.sql('UPDATE workflows_workflows SET name = ?, description = ?, definition = ?, updated_at = ? WHERE id = ?').run(
      def.name,
      def.description,
      JSON.stringify(def),
      at,
      id,
    ).changes;
    return changed ? this.get(id) : undefined;
  }

  delete(id: string): boolean {
    return this.sql('DELETE FROM workflows_workflows WHERE id = ?').run(id).changes > 0;
  }
}

function decode(row: Row): StoredWorkflow {
  const def = JSON.parse(row.definition) as Definition;
  // Definitions stored before steps had summarize and depends_on lack them.
  const steps = def.steps.map((s) => ({ ...s, summarize: s.summarize ?? false, depends_on: s.depends_on ?? [] }));
  return { ...def, steps, id: row.id, created_at: row.created_at, updated_at: row.updated_at };
}
