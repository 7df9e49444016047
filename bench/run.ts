/**
 * `npm run bench`: runs every benchmark in bench/ and prints its figures.
 * `npm run bench -- kernel memory` runs only those.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'util.ts'].includes(f))
  .sort();

let failed = false;
for (const file of files) {
  const name = file.replace(/\.ts$/, '');
  if (only.length && !only.includes(name)) continue;
  const mod = (await import(pathToFileURL(path.join(here, file)).href)) as Record<string, unknown>;
  const run = Object.values(mod).find((v): v is () => Promise<Record<string, unknown>> => typeof v === 'function');
  if (!run) continue;
  console.log(`\n== ${name}`);
  try {
    const figures = await run();
    for (const [label, value] of Object.entries(figures)) console.log(`  ${label}: ${value}`);
  } catch (err) {
    failed = true;
    console.log(`  failed: ${(err as Error).stack ?? err}`);
  }
}
process.exit(failed ? 1 : 0);
