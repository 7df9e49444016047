// A long-lived executor thread. Each call gets a fresh instance of the (already instrumented) module, a memory
// whose maximum is the cap, the fuel budget in the exported __talon_fuel global, and host calls answered only for
// the capabilities the skill declared. Guest ABI: exports alloc(size) -> ptr and execute(ptr, len) -> i64
// (result pointer in the high 32 bits, length in the low); imports talon.host_call(ptr, len) -> i64 (same packing,
// JSON {method, params} in, {ok} or {error} out) and talon.host_log(level, ptr, len).
import { parentPort } from 'node:worker_threads';

const modules = new Map();
const HOST_CALL_FUEL = 1000n;
const LOG_MAX = 4096;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function compiled(key, bytes) {
  let mod = modules.get(key);
  if (!mod) {
    if (!bytes) return undefined;
    mod = new WebAssembly.Module(bytes);
    if (modules.size > 32) modules.clear();
    modules.set(key, mod);
  }
  return mod;
}

function hostMethods(call, logs) {
  const caps = new Set(call.capabilities);
  const granted = (cap) => caps.has(cap) || caps.has('*');
  return {
    time_now: { cap: 'time', run: () => Date.now() },
    random: { cap: 'random', run: () => Math.random() },
    config_get: { cap: 'config', run: (p) => (call.config ?? {})[String(p?.key)] ?? null },
    env_read: {
      cap: (p) => `env:${String(p?.name)}`,
      run: (p) => call.env?.[String(p?.name)] ?? null,
    },
    granted,
    logs,
  };
}

function run(call) {
  const memory = new WebAssembly.Memory({ initial: call.memory?.initial ?? 0, maximum: call.memory?.maximum ?? 1 });
  const logs = [];
  const host = hostMethods(call, logs);
  let exports;
  const view = () => new Uint8Array(memory.buffer);
  const readStr = (ptr, len) => decoder.decode(view().subarray(ptr, ptr + len));
  const writeStr = (text) => {
    const data = encoder.encode(text);
    const ptr = exports.alloc(data.length) >>> 0;
    view().set(data, ptr);
    return (BigInt(ptr) << 32n) | BigInt(data.length);
  };
  const imports = {
    env: { memory },
    talon: {
      host_call(ptr, len) {
        exports.__talon_fuel.value -= HOST_CALL_FUEL;
        let request;
        try {
          request = JSON.parse(readStr(ptr >>> 0, len >>> 0));
        } catch {
          return writeStr(JSON.stringify({ error: 'host_call: the request is not JSON' }));
        }
        const method = host[request?.method];
        if (!method || typeof method.run !== 'function') return writeStr(JSON.stringify({ error: `host_call: unknown method '${request?.method}'` }));
        const cap = typeof method.cap === 'function' ? method.cap(request.params) : method.cap;
        if (!host.granted(cap)) return writeStr(JSON.stringify({ error: `host_call: capability '${cap}' is not granted to this skill` }));
        return writeStr(JSON.stringify({ ok: method.run(request.params) }));
      },
      host_log(level, ptr, len) {
        if (host.granted('log') && logs.length < 100) logs.push({ level, text: readStr(ptr >>> 0, Math.min(len >>> 0, LOG_MAX)) });
      },
    },
  };
  const mod = compiled(call.key, call.bytes);
  // The pool sends the bytes only for a module it has not sent before; after an eviction it asks again.
  if (!mod) return { missing: true };
  const instance = new WebAssembly.Instance(mod, imports);
  exports = instance.exports;
  if (typeof exports.alloc !== 'function' || typeof exports.execute !== 'function')
    return { ok: false, kind: 'invalid', error: 'the module must export alloc and execute' };
  exports.__talon_fuel.value = BigInt(call.fuel);
  const fuelUsed = () => Number(BigInt(call.fuel) - exports.__talon_fuel.value);
  try {
    const input = encoder.encode(call.envelope);
    const ptr = exports.alloc(input.length) >>> 0;
    view().set(input, ptr);
    const packed = BigInt.asUintN(64, BigInt(exports.execute(ptr, input.length)));
    const outPtr = Number(packed >> 32n);
    const outLen = Number(packed & 0xffffffffn);
    if (outLen > call.maxOutput) return { ok: false, kind: 'output', error: `the result is larger than ${call.maxOutput} bytes`, fuelUsed: fuelUsed() };
    if (outPtr + outLen > memory.buffer.byteLength) return { ok: false, kind: 'trap', error: 'the result points outside the memory', fuelUsed: fuelUsed() };
    const text = readStr(outPtr, outLen);
    let output;
    try {
      output = JSON.parse(text);
    } catch {
      output = { result: text };
    }
    return { ok: true, output, fuelUsed: fuelUsed(), logs };
  } catch (err) {
    if (exports.__talon_fuel.value < 0n)
      return { ok: false, kind: 'fuel', error: `fuel exhausted: the budget of ${call.fuel} instructions ran out`, fuelUsed: call.fuel };
    const message = err instanceof Error ? err.message : String(err);
    const atCap = memory.buffer.byteLength >= (call.memory?.maximum ?? 0) * 65536;
    if (atCap && /memory|bounds/i.test(message))
      return { ok: false, kind: 'memory', error: `memory cap reached (${call.memory.maximum} pages): ${message}`, fuelUsed: fuelUsed() };
    return { ok: false, kind: 'trap', error: `the module trapped: ${message}`, fuelUsed: fuelUsed() };
  }
}

parentPort.on('message', (call) => {
  let reply;
  try {
    reply = run(call);
  } catch (err) {
    reply = { ok: false, kind: 'invalid', error: err instanceof Error ? err.message : String(err) };
  }
  parentPort.postMessage({ id: call.id, ...reply });
});

// The pool starts a call's deadline only once the thread is up: thread start-up is not the guest's time.
parentPort.postMessage({ ready: true });
