/** The wasm.runtime service: prepare (instrument once), then run under both meters with the configured budgets. */
import type { WasmRuntime } from '@talon/wasm';
import type { Compiler } from './compile.ts';
import type { WorkerPool } from './pool.ts';
import type { WasmConfig } from '../config.ts';

const PAGE = 65536;

export function wasmRuntimeService(compiler: Compiler, pool: WorkerPool, config: () => WasmConfig): WasmRuntime {
  const maxPages = () => Math.floor((config().memory_mb * 1024 * 1024) / PAGE);
  return {
    async prepare(modulePath) {
      await compiler.prepare(modulePath, maxPages());
    },
    async run(call) {
      const started = performance.now();
      const ms = () => Math.round((performance.now() - started) * 1000) / 1000;
      let prepared;
      try {
        prepared = await compiler.prepare(call.modulePath, maxPages());
      } catch (err) {
        return { ok: false, kind: 'invalid', error: `the module cannot run: ${(err as Error).message}`, ms: ms() };
      }
      const c = config();
      const fuel = Math.min(call.fuel ?? c.fuel, c.fuel);
      const timeoutMs = Math.min(call.timeoutMs ?? c.timeout_ms, c.timeout_ms);
      const reply = await pool.run(
        {
          key: prepared.key,
          bytes: prepared.bytes,
          memory: prepared.memory ?? { initial: 0, maximum: 0 },
          envelope: JSON.stringify({ tool: call.tool, input: call.input, ...(call.config && Object.keys(call.config).length && { config: call.config }) }),
          fuel,
          capabilities: call.capabilities,
          env: call.env ?? {},
          config: call.config ?? {},
          maxOutput: c.max_output_bytes,
        },
        timeoutMs,
        call.signal,
      );
      if (reply.ok) return { ok: true, output: reply.output, fuelUsed: reply.fuelUsed, ms: ms() };
      return { ok: false, kind: reply.kind as 'trap', error: reply.error, ...(reply.fuelUsed !== undefined && { fuelUsed: reply.fuelUsed }), ms: ms() };
    },
  };
}
