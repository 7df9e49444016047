#!/usr/bin/env node
// Builds the bundled WASM skills from their source: every `<name>.wat` in a folder of modules/skills/bundled becomes
// `<name>.wasm` beside it (binaryen parses, validates and emits it). `npm ci` runs this (the prepare script); the
// binaries are not in the repository. A binary newer than its source is left alone; `--force` rebuilds all;
// `--check` builds in memory and fails (exit 1) when a binary on disk is missing or not what its source builds.
import { readdirSync, renameSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bundled = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bundled');

/** The .wat sources under the bundled skills and the binary each builds. */
function sources(root = bundled) {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(path.join(root, d.name))
        .filter((f) => f.endsWith('.wat'))
        .map((f) => ({ wat: path.join(root, d.name, f), wasm: path.join(root, d.name, f.replace(/\.wat$/, '.wasm')) })),
    );
}

/** WAT text → a validated WASM binary. */
async function compileWat(text) {
  const { default: binaryen } = await import('binaryen');
  const m = binaryen.parseText(text);
  try {
    // Any feature the text uses is accepted here: the wasm module checks the binary against what Node runs.
    m.setFeatures(binaryen.Features.All);
    if (!m.validate()) throw new Error('the module does not validate');
    return m.emitBinary();
  } finally {
    m.dispose();
  }
}

const stale = ({ wat, wasm }) => {
  const out = statSync(wasm, { throwIfNoEntry: false });
  return !out || out.mtimeMs < statSync(wat).mtimeMs;
};

if (process.argv.includes('--check')) {
  const wrong = [];
  for (const pair of sources()) {
    const built = Buffer.from(await compileWat(readFileSync(pair.wat, 'utf8')));
    const onDisk = statSync(pair.wasm, { throwIfNoEntry: false }) ? readFileSync(pair.wasm) : undefined;
    if (!onDisk?.equals(built)) wrong.push(path.relative(process.cwd(), pair.wasm));
  }
  if (wrong.length) {
    console.error(`not built from their source (run node modules/skills/scripts/build-wasm.mjs): ${wrong.join(', ')}`);
    process.exit(1);
  }
  console.log(`${sources().length} WASM skill binaries match their source`);
} else {
  const force = process.argv.includes('--force');
  for (const pair of sources().filter((p) => force || stale(p))) {
    const bytes = await compileWat(readFileSync(pair.wat, 'utf8'));
    writeFileSync(`${pair.wasm}.tmp`, bytes);
    renameSync(`${pair.wasm}.tmp`, pair.wasm);
    console.log(`built ${path.relative(process.cwd(), pair.wasm)} (${bytes.length} bytes)`);
  }
}
