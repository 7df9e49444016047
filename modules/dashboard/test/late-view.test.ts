/**
 * A module switched on while the dashboard builds brings its view too: the build that was running lacks it, so the
 * dashboard builds once more when it is done (a module loaded mid-build used to be dropped until the next load or a
 * restart).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, waitFor } from '@talon/testing';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
const sqliteOnly = { skip: process.env.TALON_TEST_DB === 'postgres' && 'modules are not switched at run time on PostgreSQL (test/fleet-reload.test.ts)' };

/** A third-party module with one view, which the install's build cannot hold. */
const withView = (name: string, text = name) => ({
  'module.toml': `name = "${name}"\nversion = "1.0.0"\n[contributes.dashboard]\nviews = [{ id = "${name}", title = "${name}", group = "Examples", order = 900, entry = "dashboard/${name}.tsx" }]\n`,
  'index.ts': `import { defineModule } from '@talon/module-sdk';\nexport default defineModule({ register() {} });\n`,
  [`dashboard/${name}.tsx`]: `export default function View() {\n  return <p>${text}</p>;\n}\n`,
});
const root = mkdtempSync(path.join(tmpdir(), 'talon-views-'));
const write = (module: string, files: Record<string, string>) => {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, module, file)), { recursive: true });
    writeFileSync(path.join(root, module, file), text);
  }
};
write('early', withView('early'));
write('late', withView('late'));
after(() => rmSync(root, { recursive: true, force: true }));

test('a module switched on during a build gets its view built after it', { ...sqliteOnly, timeout: 240_000 }, async () => {
  const k = await startTestKernel({
    only: ['dashboard', 'system', 'config-api', 'early', 'late'],
    config: `log_level = "info"\nmodule_paths = [${JSON.stringify(root)}]\n`,
  });
  const ids = async () => ((await (await k.request('/api/dashboard/views')).json()) as { views: { id: string }[] }).views.map((v) => v.id);
  const count = (text: string) => k.logLines().filter((l) => l.includes(text)).length;
  try {
    await waitFor(async () => (await ids()).includes('late'), 100_000, 'the first build with both views');
    assert.equal((await k.request('/api/modules/late/disable', { method: 'PUT' })).status, 200);
    // A changed view of a running module: the dashboard builds again, without the switched-off module.
    write('early', { 'dashboard/early.tsx': withView('early', 'changed')['dashboard/early.tsx'] });
    const builds = count('building the dashboard');
    const reloaded = await k.kernel.api.reloadModule('early');
    assert.ok(reloaded.ok, reloaded.error);
    await waitFor(() => count('building the dashboard') > builds, 30_000, 'the second build');
    const built = count('the dashboard is built');
    assert.equal((await k.request('/api/modules/late/enable', { method: 'PUT' })).status, 200);
    assert.equal(count('the dashboard is built'), built, 'switched on while the second build ran');
    await waitFor(() => count('the dashboard is built') > built, 100_000, 'the second build to end');
    await waitFor(async () => (await ids()).includes('late'), 100_000, 'the late view to be built and listed again');
    assert.ok((await ids()).includes('early'));
  } finally {
    await k.stop();
  }
});
