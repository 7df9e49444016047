/**
 * WASM skills through an agent: the bundled example is the binary built from its WAT source in the repository, its
 * tool answers the model, and a skill whose guest runs past its budget answers a clear error result (no hang).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentToml, json, startSkills, stopSkills, writeSkill, type Env } from './helpers.ts';

const example = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bundled/text-stats');

let env: Env;
before(async () => {
  // A budget the example fits in many times over, and an endless loop does not.
  env = await startSkills({ modules: ['wasm'], config: '[skills]\nwatch = false\n[wasm]\nfuel = 2000000\n' });
});
after(() => stopSkills(env));

const spin = `[skill]
name = "spinner"
description = "Never finishes"
[runtime]
type = "wasm"
entry = "spin.wat"
[[tools.provided]]
name = "spin"
description = "loops forever"
input_schema = { type = "object", properties = {} }
`;
const spinWat = `(module (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "execute") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))`;

/** The content of the last tool message the model received. */
const lastToolResult = () =>
  (env.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').at(-1)!.content;

test('the example WASM skill is the binary built from its WAT source (npm ci builds it)', async () => {
  const manifest = readFileSync(path.join(example, 'skill.toml'), 'utf8');
  assert.match(manifest, /^entry = "text_stats\.wasm"$/m);
  // In plain node, not this process (binaryen is a 15 MB script: the tests' TypeScript loader would transform it).
  const out = execFileSync(process.execPath, [path.join(example, '../../scripts/build-wasm.mjs'), '--check'], { encoding: 'utf8', timeout: 120_000 });
  assert.match(out, /WASM skill binaries match their source/);
});

test('a WASM skill tool answers through an agent and counts a use; a guest past its fuel budget is an error result', async () => {
  const { k, fake } = env;
  writeSkill(path.join(k.home, 'skills'), 'spinner', { 'skill.toml': spin, 'spin.wat': spinWat });
  assert.equal((await k.request('/api/skills/reload', { method: 'POST' })).status, 200);
  const spawn = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: agentToml('counter', ['text-stats', 'spinner']) } });
  const { agent_id } = await json<{ agent_id: string }>(spawn);
  const uses = async () => (await json<{ evolution: { use_count: number } }>(await k.request('/api/skills/text-stats'))).evolution.use_count;
  const before = await uses();

  fake.enqueue({ toolCalls: [{ name: 'text_stats', input: { text: 'two words\nand more' } }] }, { text: 'done' });
  assert.equal((await k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'count' } })).status, 200);
  assert.deepEqual(JSON.parse(lastToolResult()), { bytes: 18, words: 4, lines: 2 });
  assert.equal(await uses(), before + 1);

  fake.enqueue({ toolCalls: [{ name: 'spin', input: {} }] }, { text: 'done' });
  assert.equal((await k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'spin' } })).status, 200);
  assert.match(lastToolResult(), /skill tool 'spin' \(spin\.wat\): fuel exhausted: the budget of 2000000 instructions ran out/);
});
