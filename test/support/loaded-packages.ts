/**
 * Run in a child process by test/module-packages-load.test.ts, so that the packages it reports are the ones this one
 * kernel loaded: starts every built-in module with `TALON_OFF` (comma-separated) disabled in config.toml, then switches
 * `TALON_ON` on through PUT /api/modules/<name>/enable, and prints the npm packages in the require cache after each
 * step, one JSON line each. Module code is bundled to CommonJS and loads its packages with require() (an ES module
 * package too), so the require cache holds every package a module loaded.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { startTestKernel } from '@talon/testing';

const list = (value: string | undefined) => (value ? value.split(',') : []);
const KEY = 'loaded-packages-key-0123456789';

/** `.../node_modules/@scope/name/...` → '@scope/name': the package a loaded file belongs to (its innermost). */
function loadedPackages(): string[] {
  const names = Object.keys(createRequire(import.meta.url).cache).flatMap((file) => {
    const parts = file.split(path.sep);
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) return [];
    return [parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1]];
  });
  return [...new Set(names)].sort();
}

const k = await startTestKernel({ config: `api_key = "${KEY}"\n[modules]\ndisabled = ${JSON.stringify(list(process.env.TALON_OFF))}\n` });
try {
  console.log(JSON.stringify({ step: 'started', packages: loadedPackages() }));
  for (const name of list(process.env.TALON_ON)) {
    const res = await k.request(`/api/modules/${name}/enable`, { method: 'PUT', headers: { authorization: `Bearer ${KEY}` } });
    if (!res.ok) throw new Error(`enabling ${name}: ${res.status} ${await res.text()}`);
  }
  console.log(JSON.stringify({ step: 'enabled', packages: loadedPackages() }));
} finally {
  await k.stop();
}
