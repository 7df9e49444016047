/**
 * Hands and plugins figures (issue 14), in process over the fake provider:
 * - what a context-engine hook adds to a turn: a one-shot bash ingest hook, a one-shot node one, and a prewarmed
 *   persistent node one (turn p50 minus the turn p50 without plugins, and the hook's own time as health counts it);
 * - activating a hand of 3 agents (with a schedule and a trigger), and deactivating it;
 * - GET /api/hands/active and GET /api/hands with 50 active instances (p99, client round trip and server time).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeProvider, startTestKernel, type TestKernel } from '@talon/module-sdk/testing';
import { percentile } from './util.ts';

const TURNS = 40;
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

async function hookFigures(fake: FakeProvider, home: string): Promise<Record<string, string>> {
  const root = path.join(home, 'plugins');
  writePlugin(root, 'bench-bash', 'ingest.sh', bashHook);
  writePlugin(root, 'bench-node', 'ingest.js', nodeOnce);
  writePlugin(root, 'bench-warm', 'ingest.js', nodeWarm, 'persistent_subprocess = true');
  const k = await startTestKernel({
    home,
    only: ['plugins', 'agents', 'tools', 'llm-openai', 'error-envelope'],
    config: `context_engine = { plugin_stack = ["bench-bash", "bench-node", "bench-warm"] }\n[default_model]\nprovider = "openai"\nmodel = "m"\nbase_url = "${fake.url}/v1"\napi_key_env = "BENCH_HANDS_KEY"\n[llm]\nmax_retries = 0\n`,
  });
  try {
    await k.request('/api/plugins/prewarm', { method: 'POST', json: { plugins: ['bench-warm'] } });
    const figures: Record<string, string> = {};
    const turns = async (allowed: string) => {
      const res = await k.request('/api/agents', {
        method: 'POST',
        json: { manifest_toml: `name = "bench-${allowed || 'none'}"\nallowed_plugins = [${allowed ? `"${allowed}"` : '"no-such-plugin"'}]\n` },
      });
      const { agent_id } = (await res.json()) as { agent_id: string };
      const times: number[] = [];
      for (let i = 0; i < TURNS + 3; i++) {
        const t = await time(async () => (await k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'hello' } })).text());
        if (i >= 3) times.push(t); // the first turns warm the code paths
      }
      return times;
    };
    const base = percentile(await turns(''), 50);
    figures['turn p50 without plugins (ms)'] = f1(base);
    for (const name of ['bench-bash', 'bench-node', 'bench-warm']) {
      const times = await turns(name);
      const health = (await (await k.request(`/api/plugins/${name}/health`)).json()) as {
        hook_stats: { ingest: { avg_elapsed_ms: number; p95_elapsed_ms: number; errors: number } };
      };
      const s = health.hook_stats.ingest;
      figures[`${name}: added to turn p50 (ms)`] = f1(percentile(times, 50) - base);
      figures[`${name}: hook avg / p95 (ms), errors`] = `${f1(s.avg_elapsed_ms)} / ${f1(s.p95_elapsed_ms)}, ${s.errors}`;
    }
    return figures;
  } finally {
    await k.stop();
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
