/**
 * Hands and plugins figures (issue 14), in process over the fake provider:
 * - what a context-engine hook adds to a turn: a one-shot bash ingest hook and a node one, started at the call or
 *   ahead of it (prespawn), and a prewarmed persistent node one (turn p50 minus the turn p50 without plugins; the four kinds of turn are interleaved round by
 *   round so load on the machine hits them alike), next to the floor in the same rounds: a bare `bash -c true` and
 *   `node -e 0` spawned from this (the service's) process with pipes and a cleared environment, and the overhead of
 *   each hook over its floor (hooks are forked by the small launcher process, so on a loaded machine the overhead can
 *   come out below zero: the floor pays the fork of this large process);
 * - activating a hand of 3 agents (with a schedule and a trigger), and deactivating it;
 * - GET /api/hands/active and GET /api/hands with 50 active instances (p99, client round trip and server time).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/testing';
import { percentile } from './util.ts';

const ROUNDS = 40;
const WARMUP = 3;
const f1 = (n: number) => n.toFixed(1);

const bashHook = `#!/usr/bin/env bash\ncat >/dev/null\necho '{"type":"ingest_result","memories":[{"content":"from bash"}]}'\n`;
const nodeOnce = `let s='';process.stdin.on('data',(c)=>(s+=c));process.stdin.on('end',()=>console.log(JSON.stringify({type:'ingest_result',memories:[{content:'from node'}]})));`;
const nodeWarm = `let b='';process.stdin.setEncoding('utf8');process.stdin.on('data',(c)=>{b+=c;let i;while((i=b.indexOf('\\n'))>=0){const l=b.slice(0,i);b=b.slice(i+1);if(l.trim())process.stdout.write(JSON.stringify({type:'ingest_result',memories:[{content:'from warm node'}]})+'\\n');}});`;

function writePlugin(root: string, name: string, file: string, body: string, settings = ''): void {
  const dir = path.join(root, name, 'hooks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, file), body);
  chmodSync(path.join(dir, file), 0o755);
  writeFileSync(path.join(root, name, 'plugin.toml'), `name = "${name}"\nversion = "1.0.0"\n[hooks]\ningest = "hooks/${file}"\n${settings}\n`);
}

function teamHand(id: string): string {
  const roles = ['lead', 'worker', 'checker']
    .map((r, i) => `[agents.${r}]\n${i === 0 ? 'coordinator = true\n' : ''}description = "${r}"\nsystem_prompt = "You are the ${r}."\n`)
    .join('\n');
  return `id = "${id}"\nname = "Bench ${id}"\ntools = ["file_read"]\n[[settings]]\nkey = "tone"\nsetting_type = "select"\ndefault = "a"\n[[settings.options]]\nvalue = "a"\nlabel = "A"\n${roles}\n[[schedules]]\nrole = "worker"\ncron = "0 * * * *"\nprompt = "work"\n[[triggers]]\npattern = "task_posted"\nprompt_template = "task {{event}}"\n`;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A bare program start, spawned as hooks are: stdio pipes, a cleared environment, an empty HOME. */
function bareSpawn(argv: string[], home: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.on('error', () => undefined); // the program may exit without reading
    child.stdin.end('{}\n');
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', resolve);
  });
}

const KINDS = {
  none: '',
  'bash hook': 'bench-bash',
  'node hook': 'bench-node',
  'bash hook, prespawn': 'bench-bash-spare',
  'node hook, prespawn': 'bench-node-spare',
  'prewarmed persistent node hook': 'bench-warm',
} as const;
type Kind = keyof typeof KINDS;

async function hookFigures(fake: FakeProvider, home: string): Promise<Record<string, string>> {
  const root = path.join(home, 'plugins');
  writePlugin(root, 'bench-bash', 'ingest.sh', bashHook);
  writePlugin(root, 'bench-node', 'ingest.js', nodeOnce);
  writePlugin(root, 'bench-bash-spare', 'ingest.sh', bashHook, 'prespawn = true');
  writePlugin(root, 'bench-node-spare', 'ingest.js', nodeOnce, 'prespawn = true');
  writePlugin(root, 'bench-warm', 'ingest.js', nodeWarm, 'persistent_subprocess = true');
  const k = await startTestKernel({
    home,
    only: ['plugins', 'agents', 'tools', 'llm-openai', 'error-envelope'],
    config: `context_engine = { plugin_stack = ["bench-bash", "bench-node", "bench-bash-spare", "bench-node-spare", "bench-warm"] }\n[default_model]\nprovider = "openai"\nmodel = "m"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_HANDS_KEY"\n[llm]\nmax_retries = 0\n`,
  });
  const empty = mkdtempSync(path.join(tmpdir(), 'talon-bench-home-'));
  try {
    await k.request('/api/plugins/prewarm', { method: 'POST', json: { plugins: ['bench-warm'] } });
    const agents = {} as Record<Kind, string>;
    for (const [kind, plugin] of Object.entries(KINDS) as Array<[Kind, string]>) {
      const res = await k.request('/api/agents', {
        method: 'POST',
        json: { manifest_toml: `name = "bench-${plugin || 'none'}"\nallowed_plugins = ["${plugin || 'no-such-plugin'}"]\n` },
      });
      agents[kind] = ((await res.json()) as { agent_id: string }).agent_id;
    }
    const turns = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, [] as number[]])) as Record<Kind, number[]>;
    const floors: Record<string, number[]> = { 'bash -c true': [], 'node -e 0': [] };
    for (let round = 0; round < ROUNDS + WARMUP; round++) {
      const keep = round >= WARMUP; // the first rounds warm the code paths
      for (const kind of Object.keys(KINDS) as Kind[]) {
        const t = await time(async () => (await k.request(`/api/agents/${agents[kind]}/message`, { method: 'POST', json: { message: 'hello' } })).text());
        if (keep) turns[kind].push(t);
      }
      const b = await time(() => bareSpawn(['bash', '-c', 'true'], empty));
      const n = await time(() => bareSpawn(['node', '-e', '0'], empty));
      if (keep) {
        floors['bash -c true'].push(b);
        floors['node -e 0'].push(n);
      }
    }
    const base = percentile(turns.none, 50);
    const bashFloor = percentile(floors['bash -c true'], 50);
    const nodeFloor = percentile(floors['node -e 0'], 50);
    const floor: Partial<Record<Kind, number>> = { 'bash hook': bashFloor, 'node hook': nodeFloor };
    const figures: Record<string, string> = {
      'turn p50 without plugins (ms)': f1(base),
      'floor: bare `bash -c true` p50 (ms)': f1(bashFloor),
      'floor: bare `node -e 0` p50 (ms)': f1(nodeFloor),
    };
    for (const [kind, plugin] of Object.entries(KINDS) as Array<[Kind, string]>) {
      if (!plugin) continue;
      const health = (await (await k.request(`/api/plugins/${plugin}/health`)).json()) as {
        hook_stats: { ingest: { avg_elapsed_ms: number; p95_elapsed_ms: number; errors: number } };
      };
      const s = health.hook_stats.ingest;
      const added = percentile(turns[kind], 50) - base;
      figures[`${kind}: added to turn p50 (ms)`] = f1(added);
      const own = floor[kind];
      if (own !== undefined) figures[`${kind}: overhead over its floor (ms)`] = f1(added - own);
      figures[`${kind}: hook avg / p95 (ms), errors`] = `${f1(s.avg_elapsed_ms)} / ${f1(s.p95_elapsed_ms)}, ${s.errors}`;
    }
    return figures;
  } finally {
    await k.stop();
    rmSync(empty, { recursive: true, force: true });
  }
}

async function handFigures(fake: FakeProvider): Promise<Record<string, string>> {
  const k: TestKernel = await startTestKernel({
    only: ['hands', 'agents', 'scheduler', 'triggers', 'tasks', 'memory', 'tools', 'prompt-guard', 'llm-openai', 'error-envelope'],
    config: `[default_model]\nprovider = "openai"\nmodel = "m"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_HANDS_KEY"\n`,
  });
  try {
    const post = (p: string, json: unknown) => k.request(p, { method: 'POST', json });
    await post('/api/hands/install', { toml_content: teamHand('cycle') });
    const activate: number[] = [];
    const deactivate: number[] = [];
    for (let i = 0; i < 25; i++) {
      let id = '';
      activate.push(await time(async () => (id = ((await (await post('/api/hands/cycle/activate', {})).json()) as { instance_id: string }).instance_id)));
      deactivate.push(await time(async () => (await k.request(`/api/hands/instances/${id}`, { method: 'DELETE' })).text()));
    }
    for (let i = 0; i < 50; i++) {
      await post('/api/hands/install', { toml_content: teamHand(`h${i}`) });
      const res = await post(`/api/hands/h${i}/activate`, {});
      if (res.status !== 201) throw new Error(`activation ${i}: ${res.status} ${await res.text()}`);
    }
    const served: Record<string, number[]> = { '/api/hands/active': [], '/api/hands': [] };
    k.kernel.hooks.kernel.http.response.tap('bench', (e) => void served[e.url]?.push(e.durationMs));
    const client: Record<string, number[]> = { '/api/hands/active': [], '/api/hands': [] };
    for (let i = 0; i < 300; i++) for (const url of Object.keys(client)) client[url].push(await time(async () => (await k.request(url)).text()));
    return {
      'activate a 3-agent hand p50 / p95 (ms)': `${f1(percentile(activate, 50))} / ${f1(percentile(activate, 95))}`,
      'deactivate it p50 / p95 (ms)': `${f1(percentile(deactivate, 50))} / ${f1(percentile(deactivate, 95))}`,
      'GET /api/hands/active, 50 instances: p99 client / server (ms)': `${f1(percentile(client['/api/hands/active'], 99))} / ${f1(percentile(served['/api/hands/active'], 99))}`,
      'GET /api/hands, 51 hands: p99 client / server (ms)': `${f1(percentile(client['/api/hands'], 99))} / ${f1(percentile(served['/api/hands'], 99))}`,
    };
  } finally {
    await k.stop();
  }
}

export async function handsBench() {
  process.env.BENCH_HANDS_KEY = 'sk-bench';
  const fake = new FakeProvider();
  await fake.start();
  fake.setFallback({ text: 'ok' });
  const home = mkdtempSync(path.join(tmpdir(), 'talon-bench-hands-'));
  try {
    return { ...(await hookFigures(fake, home)), ...(await handFigures(fake)) };
  } finally {
    await fake.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
