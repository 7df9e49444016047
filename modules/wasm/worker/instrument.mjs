// Runs in a worker thread the host keeps for a batch of jobs (binaryen is an ES module with top-level await, which
// the bundled module code cannot load): WAT or WASM in, instrumented WASM out. Fuel: after binaryen's `flatten` pass every statement is about one
// instruction and loops only sit in blocks, ifs and loops, so a charge of "statements in this region" at each
// function entry and each loop iteration counts executed instructions (an upper bound); when the exported
// global __talon_fuel goes below zero the code traps. The memory becomes an import, so the host decides its maximum.
import { parentPort } from 'node:worker_threads';
import binaryen from 'binaryen';

const FUEL = '__talon_fuel';
/** What Node's V8 runs without flags. */
const FEATURES = ['MutableGlobals', 'BulkMemory', 'BulkMemoryOpt', 'SignExt', 'NontrappingFPToInt', 'MultiValue', 'ReferenceTypes', 'SIMD128']
  .map((name) => binaryen.Features[name] ?? 0)
  .reduce((a, b) => a | b, binaryen.Features.MVP);

function instrument({ source, wat, maxPages }) {
  const m = wat ? binaryen.parseText(Buffer.from(source).toString('utf8')) : binaryen.readBinary(new Uint8Array(source));
  try {
    m.setFeatures(FEATURES);
    if (!m.validate()) throw new Error('the module does not validate');
    if (m.getNumExports && hasExport(m, FUEL)) throw new Error(`the module may not export '${FUEL}'`);
    m.runPasses(['flatten']);
    m.addGlobal(FUEL, binaryen.i64, true, m.i64.const(0n));
    m.addGlobalExport(FUEL, FUEL);
    const charge = (cost) => [
      m.global.set(FUEL, m.i64.sub(m.global.get(FUEL, binaryen.i64), m.i64.const(BigInt(cost)))),
      m.if(m.i64.lt_s(m.global.get(FUEL, binaryen.i64), m.i64.const(0n)), m.unreachable()),
    ];
    const cost = (expr) => {
      const id = binaryen.getExpressionId(expr);
      if (id === binaryen.BlockId) {
        let n = 0;
        for (let i = 0; i < binaryen.Block.getNumChildren(expr); i++) n += cost(binaryen.Block.getChildAt(expr, i));
        return n;
      }
      if (id === binaryen.IfId) {
        const no = binaryen.If.getIfFalse(expr);
        return 1 + cost(binaryen.If.getIfTrue(expr)) + (no ? cost(no) : 0);
      }
      return 1;
    };
    const walk = (expr) => {
      const id = binaryen.getExpressionId(expr);
      if (id === binaryen.BlockId) {
        for (let i = 0; i < binaryen.Block.getNumChildren(expr); i++) binaryen.Block.setChildAt(expr, i, walk(binaryen.Block.getChildAt(expr, i)));
      } else if (id === binaryen.IfId) {
        binaryen.If.setIfTrue(expr, walk(binaryen.If.getIfTrue(expr)));
        const no = binaryen.If.getIfFalse(expr);
        if (no) binaryen.If.setIfFalse(expr, walk(no));
      } else if (id === binaryen.LoopId) {
        const body = walk(binaryen.Loop.getBody(expr));
        binaryen.Loop.setBody(expr, m.block(null, [...charge(Math.max(1, cost(body))), body], binaryen.getExpressionType(body)));
      }
      return expr;
    };
    for (let i = 0; i < m.getNumFunctions(); i++) {
      const f = m.getFunctionByIndex(i);
      const info = binaryen.getFunctionInfo(f);
      if (info.module !== '' || !info.body) continue;
      const body = walk(info.body);
      binaryen.Function.setBody(f, m.block(null, [...charge(Math.max(1, cost(body))), body], binaryen.getExpressionType(body)));
    }
    const memory = importMemory(m, maxPages);
    if (!m.validate()) throw new Error('instrumentation produced an invalid module');
    return { bytes: m.emitBinary(), memory };
  } finally {
    m.dispose();
  }
}

function hasExport(m, name) {
  for (let i = 0; i < m.getNumExports(); i++) if (binaryen.getExportInfo(m.getExportByIndex(i)).name === name) return true;
  return false;
}

/** The module's memory as an import "env" "memory"; refuses a module that needs more than the cap at start. */
function importMemory(m, maxPages) {
  if (!m.hasMemory()) return null;
  const info = m.getMemoryInfo();
  if (info.module) throw new Error('the module imports its memory; a skill module must define it');
  if (info.shared || info.is64) throw new Error('shared and 64-bit memories are not supported');
  if (info.initial > maxPages) throw new Error(`the module needs ${info.initial} memory pages at start, more than the cap of ${maxPages}`);
  let name = '0';
  for (let i = 0; i < m.getNumExports(); i++) {
    const e = binaryen.getExportInfo(m.getExportByIndex(i));
    if (e.kind === binaryen.ExternalMemory) name = e.value;
  }
  m.addMemoryImport(name, 'env', 'memory');
  const declared = info.max === undefined || info.max === null || info.max === 0xffffffff ? Infinity : info.max;
  return { initial: info.initial, maximum: Math.min(declared, maxPages) };
}

// Jobs one after another, for as long as the host keeps the thread.
parentPort.on('message', ({ id, ...job }) => {
  try {
    parentPort.postMessage({ id, ok: true, ...instrument(job) });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
