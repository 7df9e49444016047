/** Root HTTP parts run by the stage each names (HTTP_STAGES), whatever the order the modules load in. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';

const dir = mkdtempSync(path.join(tmpdir(), 'talon-stages-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A module whose root part appends its name to x-order; `after` makes it load after another module. */
function stageModule(name: string, stage: string | undefined, after: string[], routes = '') {
  mkdirSync(path.join(dir, name));
  const manifest = `name = "${name}"\nversion = "1.0.0"\noptional_depends = ${JSON.stringify(after)}\n`;
  writeFileSync(path.join(dir, name, 'module.toml'), manifest);
  writeFileSync(
    path.join(dir, name, 'index.ts'),
    `import { defineModule } from '@talon/module-sdk';
export default defineModule({
  register: () => ({
    ${stage ? `httpStage: ${JSON.stringify(stage)},` : ''}
    http(app) {
      app.addHook('onRequest', (_request, reply, done) => {
        reply.header('x-order', [reply.getHeader('x-order'), ${JSON.stringify(name)}].filter(Boolean).join(','));
        done();
      });
    },
    ${routes}
  }),
});
`,
  );
}

// Loaded first to last: handle-first, then limit-second, identify-third, plain-last (no stage: handle).
stageModule('handle-first', 'handle', []);
stageModule('limit-second', 'limit', ['handle-first']);
stageModule('identify-third', 'identify', ['limit-second']);
stageModule('plain-last', undefined, ['identify-third'], `routes(app) { app.get('/stages', async () => ({ ok: true })); },`);
stageModule('nowhere', 'sideways', []);

test('the root parts run by stage, then in module order; an unknown stage fails its module', async () => {
  const k = await startTestKernel({
    only: ['handle-first', 'limit-second', 'identify-third', 'plain-last', 'nowhere'],
    config: `module_paths = [${JSON.stringify(dir)}]\n`,
  });
  try {
    const res = await k.request('/stages');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-order'), 'identify-third,limit-second,handle-first,plain-last');
    const nowhere = k.kernel.modules().find((m) => m.id === 'nowhere');
    assert.equal(nowhere?.state, 'failed');
    assert.match(nowhere?.error ?? '', /unknown httpStage 'sideways': one of identify, headers, limit, authenticate, origin, handle/);
  } finally {
    await k.stop();
  }
});
