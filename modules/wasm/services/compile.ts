/**
 * A module file → instrumented bytes, once: the instrumenting worker runs binaryen; the result is kept in memory
 * and on disk (keyed by the SHA-256 of the source and the memory cap), so a restart does not pay again.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface Prepared {
  key: string;
  bytes: Uint8Array;
  memory: { initial: number; maximum: number } | null;
}

const INSTRUMENT_VERSION = 1;
const COMPILE_TIMEOUT_MS = 60_000;

export class Compiler {
  private readonly ready = new Map<string, Promise<Prepared>>();

  constructor(
    private readonly workerFile: string,
    private readonly cacheDir: () => string,
  ) {}

  prepare(modulePath: string, maxPages: number): Promise<Prepared> {
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
    return pending;
  }

  private async load(key: string, source: Buffer, wat: boolean, maxPages: number): Promise<Prepared> {
    const file = path.join(this.cacheDir(), `${key}.json`);
    if (existsSync(file)) {
      const cached = JSON.parse(readFileSync(file, 'utf8')) as { bytes: string; memory: Prepared['memory'] };
      return { key, bytes: Buffer.from(cached.bytes, 'base64'), memory: cached.memory };
    }
    const out = await instrumentInWorker(this.workerFile, { source, wat, maxPages });
    mkdirSync(this.cacheDir(), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ bytes: Buffer.from(out.bytes).toString('base64'), memory: out.memory }));
    renameSync(tmp, file);
    return { key, bytes: out.bytes, memory: out.memory };
  }
}

function instrumentInWorker(file: string, data: { source: Buffer; wat: boolean; maxPages: number }): Promise<Omit<Prepared, 'key'>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(file, { workerData: data });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error('instrumenting the module took too long'));
    }, COMPILE_TIMEOUT_MS);
    worker.once('message', (msg: { ok: boolean; error?: string; bytes?: Uint8Array; memory?: Prepared['memory'] }) => {
      clearTimeout(timer);
      void worker.terminate();
      if (msg.ok) resolve({ bytes: msg.bytes!, memory: msg.memory ?? null });
      else reject(new Error(msg.error));
    });
    worker.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
