import path from 'node:path';
import { defineModule } from '@talon/module-sdk';
import { wasmRuntime } from '@talon/wasm';
import { wasmConfigSchema, type WasmConfig } from './config.ts';
import { Compiler } from './services/compile.ts';
import { WorkerPool } from './services/pool.ts';
import { wasmRuntimeService } from './services/runtime.ts';

export default defineModule<WasmConfig>({
  configSchema: wasmConfigSchema,
  register(ctx) {
    // The worker files are plain ES modules beside this one: they run outside the bundle, in their own threads.
    const compiler = new Compiler(path.join(ctx.dir, 'worker', 'instrument.mjs'), () => path.join(ctx.dataDir, 'compiled'));
    const pool = new WorkerPool(path.join(ctx.dir, 'worker', 'execute.mjs'), () => ctx.config.workers);
    ctx.provide(
      wasmRuntime,
      wasmRuntimeService(compiler, pool, () => ctx.config),
    );
    return {
      stop: () => {
        compiler.close();
        return pool.close();
      },
    };
  },
});
