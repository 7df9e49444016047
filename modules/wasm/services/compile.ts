/**
 * A module file → instrumented bytes, once: the instrumenting worker runs binaryen; the result is kept in memory
 * and on disk (keyed by the SHA-256 of the source and the memory cap), so a restart does not pay again.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Instrumenter } from './instrumenter.ts';

export interface Prepared {
  key: string;
  bytes: Uint8Array;
  memory: { initial: number; maximum: number } | null;
}

const INSTRUMENT_VERSION = 1;

export class Compiler {
  private readonly ready = new Map<string, Promise<Prepared>>();
  private readonly files = new Map<string, { mtimeMs: number; size: number; maxPages: number; prepared: Promise<Prepared> }>();

  private readonly instrumenter: Instrumenter;

  constructor(
    workerFile: string,
    private readonly cacheDir: () => string,
  ) {
    this.instrumenter = new Instrumenter(workerFile);
  }

  close(): void {
    this.instrumenter.close();
  }

  prepare(modulePath: string, maxPages: number): Promise<Prepared> {
    // Every call asks: a stat (not a read and a hash of the whole module) tells whether the file is unchanged.
    const st = statSync(modulePath);
    const seen = this.files.get(modulePath);
    if (seen && seen.mtimeMs === st.mtimeMs && seen.size === st.size && seen.maxPages === maxPages) return seen.prepared;
    const source = readFileSync(modulePath);
    const key = createHash('sha256').update(`${INSTRUMENT_VERSION}:${maxPages}:`).update(source).digest('hex');
    let pending = this.ready.get(key);
    if (!pending) {
      // A failure is kept too: the same bytes would fail again (changed bytes get a new key).
      pending = this.load(key, source, modulePath.endsWith('.wat'), maxPages);
      pending.catch(() => undefined);
      if (this.ready.size > 64) this.ready.clear();
      this.ready.set(key, pending);
    }
    if (this.files.size > 256) this.files.clear();
    this.files.set(modulePath, { mtimeMs: st.mtimeMs, size: st.size, maxPages, prepared: pending });
    return pending;
  }

  private async load(key: string, source: Buffer, wat: boolean, maxPages: number): Promise<Prepared> {
    const file = path.join(this.cacheDir(), `${key}.json`);
    if (existsSync(file)) {
      const cached = JSON.parse(readFileSync(file, 'utf8')) as { bytes: string; memory: Prepared['memory'] };
      return { key, bytes: Buffer.from(cached.bytes, 'base64'), memory: cached.memory };
    }
    const out = await this.instrumenter.run({ source, wat, maxPages });
    mkdirSync(this.cacheDir(), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ bytes: Buffer.from(out.bytes).toString('base64'), memory: out.memory }));
    renameSync(tmp, file);
    return { key, bytes: out.bytes, memory: out.memory };
  }
}
