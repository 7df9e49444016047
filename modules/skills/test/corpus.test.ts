/**
 * The reference registry (librefang/librefang-registry), when a local copy is given in TALON_SKILL_CORPUS (the
 * registry's root folder): every skills/<name>/SKILL.md installs through the hub from that copy, the prompt context
 * of each reaches an agent (the system prompt the fake provider received), and every agents/<name>/agent.toml
 * spawns as-is. Without the variable the test is skipped and says why (the corpus is fetched outside the repository).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { splitFrontmatter } from '../services/manifest.ts';
import { agentToml, json, startSkills, stopSkills } from './helpers.ts';

const corpus = process.env.TALON_SKILL_CORPUS;
const reason = corpus ? undefined : 'TALON_SKILL_CORPUS is not set (a local copy of librefang/librefang-registry); the corpus run is skipped';
if (reason) console.log(`# skipped: ${reason}`);

const folders = (kind: string, file: string) =>
  readdirSync(path.join(corpus!, kind))
    .filter((d) => existsSync(path.join(corpus!, kind, d, file)))
    .sort();

test('the reference registry: every skill installs and its prompt context reaches an agent; every agent template spawns', { skip: reason }, async () => {
  const skills = folders('skills', 'SKILL.md');
  const agents = folders('agents', 'agent.toml');
  // Every skill in one system prompt: the total cut is raised so that none is left out.
  const env = await startSkills({
    modules: ['hub', 'templates'],
    config: `[skills]\nwatch = false\nmax_prompt_total_chars = 1000000\n[hub]\nregistry_url = ${JSON.stringify(corpus)}\n`,
  });
  const figures = { skills: skills.length, installed: 0, refused: [] as string[], warned: [] as string[], in_prompt: 0, agents: agents.length, spawned: 0 };
  const spawnFailures: string[] = [];
  try {
    for (const slug of skills) {
      const res = await env.k.request('/api/hub/install', { method: 'POST', json: { slug } });
      const body = await json<{ error?: string; findings?: Array<{ rule: string; severity: string }> }>(res);
      if (res.status !== 201) figures.refused.push(`${slug}: ${res.status} ${body.error}`);
      else figures.installed++;
      const warnings = (body.findings ?? []).filter((f) => f.severity === 'warning').map((f) => f.rule);
      if (warnings.length) figures.warned.push(`${slug}: ${[...new Set(warnings)].join(', ')}`);
    }

    const spawn = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: agentToml('corpus-reader', ['*']) } });
    const { agent_id } = await json<{ agent_id: string }>(spawn);
    env.fake.enqueue({ text: 'ok' });
    assert.equal((await env.k.request(`/api/agents/${agent_id}/message`, { method: 'POST', json: { message: 'hello' } })).status, 200);
    const system = (env.fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'system')!.content;
    const missing: string[] = [];
    for (const slug of skills) {
      const { meta, body } = splitFrontmatter(readFileSync(path.join(corpus!, 'skills', slug, 'SKILL.md'), 'utf8'), 'SKILL.md');
      const name = String(meta.name ?? slug);
      const fenced = `--- Skill: ${name} v${String(meta.version ?? '0.1.0')} (external skill context, reference only) ---\n${body}\n--- End of skill: ${name} ---`;
      if (system.includes(fenced)) figures.in_prompt++;
      else missing.push(slug);
    }

    for (const name of agents) {
      const manifest_toml = readFileSync(path.join(corpus!, 'agents', name, 'agent.toml'), 'utf8');
      const res = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml } });
      if (res.status === 201) figures.spawned++;
      else spawnFailures.push(`${name}: ${res.status} ${(await json<{ error: string }>(res)).error}`);
    }
    const listed = new Set((await json<{ templates: Array<{ name: string }> }>(await env.k.request('/api/templates'))).templates.map((t) => t.name));

    console.log(`# corpus: ${JSON.stringify(figures)}`);
    assert.deepEqual(figures.refused, []);
    assert.deepEqual(missing, [], 'skills whose prompt context did not reach the agent');
    assert.deepEqual(spawnFailures, []);
    assert.deepEqual(
      agents.filter((a) => !listed.has(a)),
      [],
      'registry agents missing from GET /api/templates',
    );
  } finally {
    await stopSkills(env);
  }
});
