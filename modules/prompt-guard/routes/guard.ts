/** The rules in force and a scan on demand (to check a text before trusting it, and to test rules). */
import type { Routes } from '@talon/module-sdk';
import type { PromptScanner } from '@talon/prompt-guard';

const scanBody = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 10_000_000, description: 'the text to scan' } },
  required: ['text'],
  additionalProperties: false,
} as const;

export function guardRoutes(app: Routes, scanner: () => PromptScanner): void {
  app.get('/api/prompt-guard/rules', { schema: { summary: 'Prompt-injection rules in force', tags: ['security'] } }, async () => {
    const rules = scanner().rules();
    return { rules, total: rules.length };
  });
  app.post('/api/prompt-guard/scan', { schema: { summary: 'Scan a text for prompt-injection shapes', tags: ['security'], body: scanBody } }, async (request) =>
    scanner().scan(request.body.text),
  );
}
