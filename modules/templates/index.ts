import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { registryService } from '@talon/hub';
import { allTemplates } from './services/templates.ts';
import { PROFILES } from './services/profiles.ts';
import { templateRoutes } from './routes/templates.ts';
import { templatesConfigSchema, type TemplatesConfig } from './config.ts';

export default defineModule<TemplatesConfig>({
  configSchema: templatesConfigSchema,
  register(ctx) {
    const templates = () => allTemplates(ctx.config.dir || path.join(ctx.home, 'templates'), path.join(ctx.dir, 'bundled'), ctx.tryUse(registryService));
    // profile = "<name>" in a manifest that lists no tools grants the profile's tools.
    ctx.hooks.tryTap(agentHooks)?.manifest.tap('profile-tools', (manifest) => {
      const profile = manifest.extra.profile;
      if (typeof profile !== 'string' || manifest.capabilities.tools.length || !Object.hasOwn(PROFILES, profile)) return manifest;
      return { ...manifest, capabilities: { ...manifest.capabilities, tools: [...PROFILES[profile]] } };
    });
    return { routes: (app) => templateRoutes(app, templates) };
  },
});
