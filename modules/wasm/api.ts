/**
 * Contract of the wasm module (security system wasm_dual_metering): runs one tool of a WebAssembly skill in a
 * worker thread under two independent meters — fuel (an instruction budget counted by code instrumented into the
 * module before it is instantiated) and an epoch deadline (wall clock; the worker is terminated) — with a capped
 * linear memory and host calls gated by the skill's declared capabilities.
 */
import { serviceRef } from '@talon/module-sdk';

export interface WasmCall {
  /** A .wasm or .wat file (the text format is compiled when first used). */
  modulePath: string;
  tool: string;
  input: Record<string, unknown>;
  /** The skill's [config] table, passed to the guest. */
  config?: Record<string, unknown>;
  /** Host calls the skill declared (time, log, env:NAME, config...); anything else is refused. */
  capabilities: readonly string[];
  /** Values for env:NAME capabilities (already filtered by the caller's passthrough rules). */
  env?: Readonly<Record<string, string>>;
  /** Overrides of the configured budgets (never above them). */
  fuel?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type WasmFailure = 'fuel' | 'epoch' | 'memory' | 'trap' | 'invalid' | 'output' | 'aborted';

export type WasmResult =
  { ok: true; output: unknown; fuelUsed: number; ms: number } | { ok: false; kind: WasmFailure; error: string; fuelUsed?: number; ms: number };

export interface WasmRuntime {
  run(call: WasmCall): Promise<WasmResult>;
  /** Compiles and instruments a module ahead of its first call; rejects with the reason it cannot run. */
  prepare(modulePath: string): Promise<void>;
}

export const wasmRuntime = serviceRef<WasmRuntime>('wasm.runtime');
