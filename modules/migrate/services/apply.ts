/** Runs a plan: imports what can be imported, skips what exists (a second run imports nothing new). */
import { cpSync, existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import type { Queries } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { SemanticMemory } from '@talon/memory';
import type { SchedulerJobs } from '@talon/scheduler';
import type { Item, Plan } from './scan.ts';

export interface ApplyDeps {
  store: Queries;
  skillsDir: string;
  agents: () => AgentRegistry | undefined;
  memory: () => SemanticMemory | undefined;
  jobs: () => SchedulerJobs | undefined;
}

export interface Outcome {
  status: 'completed';
  source: string;
  path: string;
  dry_run: boolean;
  imported: Array<{ kind: string; name: string }>;
  skipped: Array<{ kind: string; name: string; reason: string }>;
  warnings: string[];
  report: string;
}

const inLedger = async (store: Queries, source: string, kind: string, name: string) =>
  Boolean(await store.one('SELECT 1 FROM migrate_ledger WHERE source = ? AND kind = ? AND name = ?', [source, kind, name]));

/** Why an item is not imported (undefined: it can be). A dry run counts the agents it would import as there. */
async function blocker(item: Item, plan: Plan, d: ApplyDeps, dryRun: boolean): Promise<string | undefined> {
  if (item.kind === 'agent') {
    const registry = d.agents();
    if (!registry) return 'the agents module is not running';
    return registry.findByName(item.name) ? 'an agent with this name exists' : undefined;
  }
  if (item.kind === 'memory') {
    if (!d.memory()) return 'the memory module is not running';
    return (await inLedger(d.store, plan.source, 'memory', item.name)) ? 'imported by an earlier run' : undefined;
  }
  if (item.kind === 'skill') return existsSync(path.join(d.skillsDir, item.name)) ? 'a skill with this name exists' : undefined;
  if ('reason' in item) return item.reason;
  if (!d.jobs()) return 'the scheduler module is not running';
  if (await inLedger(d.store, plan.source, 'schedule', item.job.key)) return 'imported by an earlier run';
  const planned = dryRun && plan.items.some((i) => i.kind === 'agent' && i.name === item.job.agent);
  return planned || d.agents()?.findByName(item.job.agent) ? undefined : `its agent '${item.job.agent}' is not in Talon`;
}

const remember = (store: Queries, source: string, kind: string, name: string) =>
  store.run('INSERT INTO migrate_ledger (source, kind, name, imported_at) VALUES (?, ?, ?, ?) ON CONFLICT (source, kind, name) DO NOTHING', [
    source,
    kind,
    name,
    new Date().toISOString(),
  ]);

async function importItem(item: Item, plan: Plan, d: ApplyDeps): Promise<void> {
  if (item.kind === 'agent') await d.agents()!.spawn({ manifestToml: item.manifestToml });
  else if (item.kind === 'memory') {
    const agent = d.agents()?.findByName(item.agent);
    await d.memory()!.add({ content: item.content, agentId: agent?.id, level: 'agent', source: `migration:${plan.source}`, tags: ['migrated'] });
    await remember(d.store, plan.source, 'memory', item.name);
  } else if (item.kind === 'schedule' && 'job' in item) {
    const { job } = item;
    const agentId = d.agents()!.findByName(job.agent)!.id;
    await d
      .jobs()!
      .create(
        { name: item.name, agentId, schedule: job.schedule, tz: job.tz, prompt: job.prompt, enabled: job.enabled, sessionMode: job.sessionMode },
        'migrate',
      );
    await remember(d.store, plan.source, 'schedule', job.key);
  } else if (item.kind === 'skill') {
    // Links are left behind: an imported skill never points outside its own folder.
    cpSync(item.dir, path.join(d.skillsDir, item.name), { recursive: true, filter: (src) => !lstatSync(src).isSymbolicLink() });
  }
}

export async function applyPlan(plan: Plan, dryRun: boolean, d: ApplyDeps): Promise<Outcome> {
  const imported: Outcome['imported'] = [];
  const skipped: Outcome['skipped'] = [];
  // Agents first: memory is attached to the agents imported just before.
  const ordered = [...plan.items].sort((a, b) => Number(b.kind === 'agent') - Number(a.kind === 'agent'));
  for (const item of ordered) {
    const reason = await blocker(item, plan, d, dryRun);
    if (reason) {
      skipped.push({ kind: item.kind, name: item.name, reason });
      continue;
    }
    try {
      if (!dryRun) await importItem(item, plan, d);
      imported.push({ kind: item.kind, name: item.name });
    } catch (err) {
      skipped.push({ kind: item.kind, name: item.name, reason: (err as Error).message });
    }
  }
  return {
    status: 'completed',
    source: plan.source,
    path: plan.path,
    dry_run: dryRun,
    imported,
    skipped,
    warnings: plan.warnings,
    report: report(plan, dryRun, imported, skipped),
  };
}

function report(plan: Plan, dryRun: boolean, imported: Outcome['imported'], skipped: Outcome['skipped']): string {
  const lines = [
    `# Migration from ${plan.source}${dryRun ? ' (dry run)' : ''}`,
    '',
    `Source: ${plan.path}`,
    '',
    `## ${dryRun ? 'Would import' : 'Imported'} (${imported.length})`,
  ];
  for (const i of imported) lines.push(`- ${i.kind}: ${i.name}`);
  lines.push('', `## Skipped (${skipped.length})`);
  for (const s of skipped) lines.push(`- ${s.kind}: ${s.name} — ${s.reason}`);
  if (plan.warnings.length) lines.push('', '## Warnings', ...plan.warnings.map((w) => `- ${w}`));
  return lines.join('\n') + '\n';
}
