import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentEvents, agentHooks } from '@talon/agents';
import { promptScanner } from '@talon/prompt-guard';
import { sandboxService } from '@talon/tools';
import { wasmRuntime } from '@talon/wasm';
import { manifestSigner } from '@talon/manifest-signing';
import { skillEvents, skillStore, skillsHooks } from '@talon/skills';
import { skillsConfigSchema, type SkillsConfig } from './config.ts';
import { ORIGINS, SkillHistory } from './services/history.ts';
import { SkillRegistry } from './services/store.ts';
import { Installer } from './services/install.ts';
import { createSkill } from './services/create.ts';
import { PromptSections } from './services/prompt.ts';
import { SkillTools } from './services/tools.ts';
import { skillService } from './services/service.ts';
import { watchSkills } from './services/watch.ts';
import { checkSkillNames } from './services/manifest-check.ts';
import { skillRoutes } from './routes/skills.ts';

/** Change-feed topic: a skill folder was installed, created or removed by the API (key: its path; '': all, a reload). */
const FOLDERS = 'folders';

export default defineModule<SkillsConfig>({
  configSchema: skillsConfigSchema,
  hooks: [skillsHooks],
  events: [skillEvents],
  register(ctx) {
    const events = ctx.events.of(skillEvents);
    const userDir = () => ctx.config.dir || path.join(ctx.home, 'skills');
    const scanner = () => ctx.use(promptScanner);
    const history = new SkillHistory(ctx.store, ctx.changes, (err, uses) => ctx.log.warn({ err, uses }, 'skill use counts not written'));
    const folderChanged = (dir: string) => ctx.changes.note(FOLDERS, dir);
    const registry = new SkillRegistry({
      bundledDir: path.join(ctx.dir, 'bundled'),
      userDir,
      config: () => ctx.config,
      scanner,
      history,
      log: ctx.log,
      onBlocked: (b) => events.publish('skill.blocked', { name: b.name, stage: 'load', reason: b.reason }),
    });
    const installer = new Installer({
      registry,
      history,
      config: () => ctx.config,
      scanner,
      signer: () => ctx.tryUse(manifestSigner),
      resolve: (request) => ctx.hooks.get(skillsHooks).resolveSource.promise(request),
      stagingRoot: () => path.join(ctx.dataDir, 'staging'),
      userDir,
      home: ctx.home,
      events,
      folderChanged,
    });
    const store = skillService({ registry, history, installer, events, folderChanged });
    ctx.provide(skillStore, store);

    const sections = new PromptSections(registry, () => ctx.config);
    ctx.events.of(agentEvents).subscribe('agent.terminated', (event) => sections.forget(event.data.agentId));
    const tools = new SkillTools(
      registry,
      history,
      { sandbox: () => ctx.tryUse(sandboxService), wasm: () => ctx.tryUse(wasmRuntime), config: () => ctx.config },
      ctx.log,
    );
    const agents = ctx.hooks.tap(agentHooks);
    agents.tools.tap('skill-tools', (list) => tools.contribute(list));
    // A skill a manifest names must be installed (loaded: a blocked one is not): refused at spawn, not at the first chat.
    agents.checkManifest.tap('skill-names', (check) => checkSkillNames(check, (name) => registry.get(name) !== undefined));
    agents.beforeModelCall.tap('skill-context', (call) => {
      const section = sections.section(call.agent);
      return section ? { ...call, system: `${call.system}\n\n${section}` } : call;
    });

    return {
      async start() {
        // What other processes of the home change is read again here (heard from before the first read): origins
        // first (a skill installed there is noted with its origin before its folder).
        ctx.changes.on(ORIGINS, () => history.load());
        ctx.changes.on(FOLDERS, (dir) => (dir && path.dirname(dir) === userDir() ? registry.refreshFolder(dir) : registry.loadAll()));
        await history.load();
        const count = await registry.loadAll();
        ctx.log.info({ skills: count, blocked: registry.blocked().length }, 'skills loaded');
        if (ctx.config.watch) {
          const watcher = watchSkills(userDir(), registry, ctx.log, ctx);
          ctx.onStop(() => watcher.close());
        }
      },
      stop: () => history.flush(),
      routes: (app) =>
        skillRoutes(app, {
          store,
          registry,
          create: (body) => createSkill(body, { registry, scanner: scanner(), userDir: userDir(), events, folderChanged }),
        }),
    };
  },
});
