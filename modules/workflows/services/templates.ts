/**
 * Where workflow templates come from: the ones users saved (the store), then the hub registry's `workflows/*.toml` —
 * read only once the registry has been synced (listing templates never starts the first download), parsed once per registry
 * revision and after each sync. A saved template takes the place of a registry template with the same id.
 */
import type { Logger } from 'pino';
import type { Store } from '@talon/module-sdk';
import type { RegistryService, RegistryStatus } from '@talon/hub';
import { TemplateReader, type WorkflowTemplate } from './template-format.ts';

const REGISTRY = 'hub';

interface Row {
  template: string;
}

export class TemplateCatalog {
  private readonly reader = new TemplateReader();
  private fromRegistry?: { revision: string; templates: WorkflowTemplate[] };
  private reading?: Promise<WorkflowTemplate[]>;

  constructor(
    private readonly store: Store,
    private readonly registry: () => RegistryService | undefined,
    private readonly log: Logger,
  ) {}

  async list(): Promise<WorkflowTemplate[]> {
    const saved = await this.saved();
    const taken = new Set(saved.map((t) => t.id));
    return [...saved, ...(await this.registryTemplates()).filter((t) => !taken.has(t.id))];
  }

  async get(id: string): Promise<WorkflowTemplate | undefined> {
    return (await this.savedOne(id)) ?? (await this.registryTemplates()).find((t) => t.id === id);
  }

  /** The registry synced: its templates are read again at the next use (a folder may change below its top level, its revision not). */
  forgetRegistry(): void {
    this.fromRegistry = undefined;
  }

  /** The hub registry's state, or null when the hub module is not running. */
  registryStatus(): RegistryStatus | null {
    return this.registry()?.status() ?? null;
  }

  async savedOne(id: string): Promise<WorkflowTemplate | undefined> {
    const row = await this.store.one<Row>('SELECT template FROM workflows_templates WHERE id = ?', [id]);
    return row && decode(row);
  }

  /** Writes a user template (inserted, or replacing the one with its id). */
  async save(template: WorkflowTemplate): Promise<void> {
    const { source: _source, ...stored } = template;
    const at = new Date().toISOString();
    await this.store.run(
      'INSERT INTO workflows_templates (id, template, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET template = excluded.template, updated_at = excluded.updated_at',
      [template.id, JSON.stringify(stored), at, at],
    );
  }

  async delete(id: string): Promise<boolean> {
    return (await this.store.run('DELETE FROM workflows_templates WHERE id = ?', [id])).changes > 0;
  }

  private async saved(): Promise<WorkflowTemplate[]> {
    return (await this.store.many<Row>('SELECT template FROM workflows_templates ORDER BY seq')).map(decode);
  }

  /** The registry's templates, parsed once per revision; concurrent first reads share one. */
  private registryTemplates(): Promise<WorkflowTemplate[]> {
    this.reading ??= this.readRegistry().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readRegistry(): Promise<WorkflowTemplate[]> {
    const registry = this.registry();
    if (!registry || registry.status(REGISTRY).revision === null) return [];
    let entries;
    try {
      entries = await registry.entries('workflows', REGISTRY);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'the workflow templates of the hub registry could not be listed');
      return this.fromRegistry?.templates ?? [];
    }
    const revision = registry.status(REGISTRY).revision ?? '';
    if (this.fromRegistry?.revision === revision) return this.fromRegistry.templates;
    const templates = new Map<string, WorkflowTemplate>();
    for (const entry of entries) {
      try {
        const text = await registry.readEntry('workflows', entry.slug, REGISTRY);
        if (text === undefined) continue;
        const template = this.reader.fromToml(text, `registry:${REGISTRY}`);
        if (!templates.has(template.id)) templates.set(template.id, template);
      } catch (err) {
        this.log.warn({ template: entry.slug, err: (err as Error).message }, 'a workflow template of the hub registry is skipped');
      }
    }
    this.fromRegistry = { revision, templates: [...templates.values()] };
    return this.fromRegistry.templates;
  }
}

function decode(row: Row): WorkflowTemplate {
  return { ...(JSON.parse(row.template) as Omit<WorkflowTemplate, 'source'>), source: 'user' };
}
