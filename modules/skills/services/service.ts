/** The skills.store service: list, detail, install, uninstall, reload over the registry and the installer. */
import { rmSync } from 'node:fs';
import { badRequest, notFound, type EventChannel } from '@talon/module-sdk';
import type { SkillDetail, skillEvents, SkillStore, SkillSummary } from '@talon/skills';
import { SOURCE_NAMES, summaryOf, type SkillRegistry } from './store.ts';
import { readManifest } from './manifest.ts';
import type { SkillHistory } from './history.ts';
import type { Installer } from './install.ts';
import { linkedFiles } from './tree.ts';

export interface ServiceDeps {
  registry: SkillRegistry;
  history: SkillHistory;
  installer: Installer;
  events: EventChannel<typeof skillEvents>;
  /** Tells the other processes of the home that a skill folder changed; '' for all of them. */
  folderChanged: (dir: string) => Promise<void>;
}

export function skillService({ registry, history, installer, events, folderChanged }: ServiceDeps): SkillStore {
  return {
    list: (): SkillSummary[] => registry.all().map((s) => s.summary),
    detail: (name) => detailOf(registry, history, name),
    install: (source, options) => installer.install(source, options),
    installStaged: (staged, options) => installer.installStaged(staged, options),
    async uninstall(name) {
      const skill = registry.get(name);
      if (!skill) throw notFound(`Skill '${name}' not found`);
      if (skill.bundled) throw badRequest(`skill '${name}' is bundled with the service and cannot be uninstalled (disable it with [skills] disabled)`);
      registry.forget(name);
      rmSync(skill.dir, { recursive: true, force: true });
      await history.forgetOrigin(name);
      await folderChanged(skill.dir);
      events.publish('skill.uninstalled', { name });
    },
    async reload() {
      const count = await registry.loadAll();
      await folderChanged('');
      return count;
    },
    describe(dir) {
      const manifest = readManifest(dir);
      return { ...summaryOf(manifest, { type: 'registry' }), converted_from: manifest.conversion.from };
    },
  };
}

async function detailOf(registry: SkillRegistry, history: SkillHistory, name: string): Promise<SkillDetail | undefined> {
  const skill = registry.get(name);
  if (!skill) return undefined;
  const m = skill.manifest;
  return {
    name: m.name,
    version: m.version,
    description: m.description,
    author: m.author,
    license: m.license,
    tags: m.tags,
    category: m.category,
    runtime: m.runtime,
    tools: m.tools,
    has_prompt_context: m.promptContext.length > 0,
    prompt_context_length: m.promptContext.length,
    source: SOURCE_NAMES[skill.origin.type],
    origin: skill.origin,
    enabled: true,
    bundled: skill.bundled,
    path: skill.dir,
    linked_files: linkedFiles(skill.dir),
    evolution: await history.evolution(name),
    findings: skill.findings,
  };
}
