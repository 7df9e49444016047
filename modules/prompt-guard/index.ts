import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { promptScanner, type PromptScanner } from '@talon/prompt-guard';
import { guardConfigSchema, type GuardConfig } from './config.ts';
import { loadRules } from './services/rules.ts';
import { Scanner } from './services/scanner.ts';
import { UntrustedContent } from './services/untrusted.ts';
import { guardRoutes } from './routes/guard.ts';

export default defineModule<GuardConfig>({
  configSchema: guardConfigSchema,
  register(ctx) {
    // The rules are read here: a broken rules file fails the module, and a security module that fails stops start-up
    // (it never fails open). Every part of this copy is handed a loaded scanner.
    const file = ctx.config.rules_file || path.join(ctx.dir, 'bundled', 'injection-rules.json');
    const scanner = new Scanner(loadRules(file));
    ctx.log.debug({ rules: scanner.rules().length, file }, 'prompt-injection rules loaded');
    const service: PromptScanner = {
      scan: (text, file) => scanner.scan(text, file),
      scanFiles: (files) => scanner.scanFiles(files),
      rules: () => scanner.rules(),
      summary: (report) => scanner.summary(report),
    };
    ctx.provide(promptScanner, service);
    const untrusted = new UntrustedContent(
      () => service,
      () => ctx.config,
    );
    const agents = ctx.hooks.tryTap(agentHooks);
    agents?.toolResult.tap('mark-untrusted', (output, call) => untrusted.toolResult(output, call));
    agents?.beforeModelCall.tap('mark-injected-message', (call) => untrusted.beforeModelCall(call));
    return { routes: (app) => guardRoutes(app, () => service) };
  },
});
