import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { agentHooks } from '@talon/agents';
import { promptScanner, type PromptScanner } from '@talon/prompt-guard';
import { securityHooks } from '@talon/security';
import { guardConfigSchema, type GuardConfig } from './services/config.ts';
import { loadRules } from './services/rules.ts';
import { Scanner } from './services/scanner.ts';
import { UntrustedContent } from './services/untrusted.ts';
import { guardRoutes } from './routes/guard.ts';

export default defineModule<GuardConfig>({
  configSchema: guardConfigSchema,
  register(ctx) {
    // The rules are read in start(): a broken rules file stops start-up (a security module never fails open).
    let scanner: Scanner | undefined;
    const current = (): Scanner => {
      if (!scanner) throw new Error('prompt-guard: the rules are not loaded yet');
      return scanner;
    };
    const service: PromptScanner = {
      scan: (text, file) => current().scan(text, file),
      scanFiles: (files) => current().scanFiles(files),
      rules: () => current().rules(),
      summary: (report) => current().summary(report),
    };
    ctx.provide(promptScanner, service);
    const untrusted = new UntrustedContent(current, () => ctx.config);
    const agents = ctx.hooks.tryTap(agentHooks);
    agents?.toolResult.tap('mark-untrusted', (output, call) => untrusted.toolResult(output, call));
    agents?.beforeModelCall.tap('mark-injected-message', (call) => untrusted.beforeModelCall(call));
    // On once the rules are loaded: until then every scan would throw.
    ctx.hooks.tryTap(securityHooks)?.systemStates.tap('prompt-guard', (states) => (scanner ? states : { ...states, prompt_injection_scanning: 'inactive' }));
    return {
      start() {
        const file = ctx.config.rules_file || path.join(ctx.dir, 'rules', 'injection-rules.json');
        scanner = new Scanner(loadRules(file));
        ctx.log.debug({ rules: scanner.rules().length, file }, 'prompt-injection rules loaded');
      },
      routes: (app) => guardRoutes(app, current),
    };
  },
});
