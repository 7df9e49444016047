/**
 * Reads a home of another system into a plan: what can be imported (agents, their memory, skills, the schedules of
 * agent turns) and what is listed but left for the operator (sessions, other schedules, channels, config keys), with
 * warnings. Nothing is written here.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { isSecretKey } from '@talon/module-sdk';
import type { Source } from './sources.ts';

/** A scheduled agent turn, in the scheduler's terms. */
export interface ScheduleSpec {
  /** The source's id of the job (the ledger remembers it). */
  key: string;
  /** The agent's name (as imported). */
  agent: string;
  /** "<5-field cron>", "every <n>s" or "at <ISO time>". */
  schedule: string;
  tz?: string;
  prompt: string;
  enabled: boolean;
  sessionMode?: 'persistent' | 'new';
}

export type Item =
  | { kind: 'agent'; name: string; manifestToml: string; provider: string; model: string }
  | { kind: 'memory'; name: string; agent: string; content: string }
  | { kind: 'skill'; name: string; dir: string }
  | { kind: 'schedule'; name: string; job: ScheduleSpec }
  | { kind: 'session' | 'schedule' | 'channel' | 'config'; name: string; reason: string };

/** A schedule of the source, as either kind's fields: its timing, or why it cannot be imported. */
type Timing = { schedule: string; tz?: string } | { reason: string };

function timing(s: { kind?: string; expr?: string; tz?: string; every_secs?: number; everyMs?: number; at?: string } | undefined): Timing {
  if (s?.kind === 'cron' && s.expr) return { schedule: s.expr, ...(s.tz ? { tz: s.tz } : {}) };
  const secs = s?.every_secs ?? (s?.everyMs === undefined ? undefined : Math.round(s.everyMs / 1000));
  if (s?.kind === 'every' && secs) return { schedule: `every ${secs}s` };
  if (s?.kind === 'at' && s.at) return { schedule: `at ${s.at}` };
  return { reason: `its schedule (${JSON.stringify(s ?? null)}) is not one the scheduler knows` };
}

/** The item of one job: importable when it is an agent turn of an agent found in the source. */
function scheduleItem(name: string, key: string, agent: string | undefined, message: string | undefined, when: Timing, rest: Partial<ScheduleSpec>): Item {
  const recreate = 'recreate it with POST /api/schedules';
  if (message === undefined) return { kind: 'schedule', name, reason: `only scheduled agent turns are imported: ${recreate}` };
  if (!agent) return { kind: 'schedule', name, reason: `its agent is not one of the agents found in the source: ${recreate}` };
  if ('reason' in when) return { kind: 'schedule', name, reason: `${when.reason}: ${recreate}` };
  return { kind: 'schedule', name, job: { key, agent, ...when, prompt: message, enabled: rest.enabled ?? true, sessionMode: rest.sessionMode } };
}

export interface Plan {
  source: Source;
  path: string;
  items: Item[];
  warnings: string[];
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
const subdirs = (p: string) => (isDir(p) ? readdirSync(p).filter((n) => isDir(path.join(p, n))) : []);
const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : undefined);
const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

function skillsIn(dir: string, items: Item[]): void {
  for (const name of subdirs(dir)) if (existsSync(path.join(dir, name, 'SKILL.md'))) items.push({ kind: 'skill', name, dir: path.join(dir, name) });
}

/** Bullet lines and paragraphs of a MEMORY.md, one memory each. */
function memories(agent: string, text: string | undefined, items: Item[]): void {
  for (const block of (text ?? '').split(/\n\s*\n|\n(?=\s*[-*] )/)) {
    const content = block
      .replace(/^\s*[-*]\s+/, '')
      .replace(/^#+\s.*$/gm, '')
      .trim();
    if (content.length >= 3) items.push({ kind: 'memory', name: `${agent}:${hash(content)}`, agent, content: content.slice(0, 8000) });
  }
}

// ---------------------------------------------------------------- LibreFang / OpenFang

function scanFang(source: Source, dir: string): Plan {
  const items: Item[] = [];
  const warnings: string[] = [];
  const configText = read(path.join(dir, 'config.toml'));
  if (configText) {
    try {
      const config = parse(configText) as Record<string, unknown>;
      for (const [key, value] of Object.entries(config)) {
        if (key === 'channels' && value && typeof value === 'object') {
          for (const ch of Object.keys(value))
            items.push({ kind: 'channel', name: ch, reason: 'channel tokens are not copied: configure the channel in Talon' });
        } else if (!isSecretKey(key))
          items.push({ kind: 'config', name: key, reason: "review it and set it in Talon's config.toml (names and meanings may differ)" });
      }
    } catch (err) {
      warnings.push(`config.toml does not parse: ${(err as Error).message}`);
    }
  }
  for (const name of subdirs(path.join(dir, 'agents'))) {
    const text = read(path.join(dir, 'agents', name, 'agent.toml'));
    if (!text) continue;
    try {
      const m = parse(text) as { name?: string; model?: { provider?: string; model?: string } };
      items.push({ kind: 'agent', name: m.name ?? name, manifestToml: text, provider: m.model?.provider ?? 'default', model: m.model?.model ?? 'default' });
    } catch (err) {
      warnings.push(`agents/${name}/agent.toml does not parse: ${(err as Error).message}`);
    }
  }
  skillsIn(path.join(dir, 'skills'), items);
  const cron = read(path.join(dir, 'data', 'cron_jobs.json'));
  if (cron) {
    try {
      const agentNames = new Set(items.filter((i) => i.kind === 'agent').map((i) => i.name));
      for (const entry of JSON.parse(cron) as FangJobMeta[]) items.push(fangSchedule(entry.job ?? (entry as FangJob), agentNames));
    } catch {
      warnings.push('data/cron_jobs.json does not parse');
    }
  }
  if (isDir(path.join(dir, 'data')))
    warnings.push(`sessions and memory in ${source}'s SQLite database are not imported (its schema is not a stable interface)`);
  return { source, path: dir, items, warnings };
}

/** data/cron_jobs.json: an array of {job: CronJob, one_shot, last_status, ...}. */
interface FangJob {
  id?: string;
  name?: string;
  agent_id?: string;
  agent_name?: string;
  enabled?: boolean;
  schedule?: { kind?: string; expr?: string; tz?: string; every_secs?: number; at?: string };
  action?: { kind?: string; message?: string };
  session_mode?: string;
}
type FangJobMeta = { job?: FangJob };

/**
 * A job names its agent by the UUID in the source's database, which is not read (its schema is not an interface):
 * only a job that also names the agent (`agent_name`) of an agent found in the home is imported.
 */
function fangSchedule(job: FangJob, agents: Set<string>): Item {
  const name = job.name ?? job.id ?? 'job';
  const agent = job.agent_name && agents.has(job.agent_name) ? job.agent_name : undefined;
  const message = job.action?.kind === 'agent_turn' ? (job.action.message ?? '') : undefined;
  const mode = job.session_mode === 'new' || job.session_mode === 'persistent' ? job.session_mode : undefined;
  return scheduleItem(name, job.id ?? name, agent, message, timing(job.schedule), { enabled: job.enabled !== false, sessionMode: mode });
}

// ---------------------------------------------------------------- OpenClaw

/** cron/jobs.json: {version: 1, jobs: [CronJob]}. */
interface ClawJob {
  id?: string;
  name?: string;
  agentId?: string;
  enabled?: boolean;
  schedule?: { kind?: string; expr?: string; tz?: string; everyMs?: number; at?: string };
  sessionTarget?: string;
  payload?: { kind?: string; message?: string };
}

/** A job without an agent belongs to the default agent, `main`; an isolated one runs in a fresh session. */
function clawSchedule(job: ClawJob, agents: Set<string>): Item {
  const name = job.name ?? job.id ?? 'job';
  const agentId = job.agentId ?? 'main';
  const message = job.payload?.kind === 'agentTurn' ? (job.payload.message ?? '') : undefined;
  const sessionMode = job.sessionTarget === 'isolated' ? 'new' : 'persistent';
  return scheduleItem(name, job.id ?? name, agents.has(agentId) ? agentId : undefined, message, timing(job.schedule), {
    enabled: job.enabled !== false,
    sessionMode,
  });
}

interface ClawAgent {
  id: string;
  name?: string;
  workspace?: string;
  model?: string | { primary?: string };
}

/** openclaw.json is JSON5: comments and trailing commas are dropped before parsing. */
function parseJson5(text: string): Record<string, unknown> {
  const stripped = text.replace(/("(?:\\.|[^"\\])*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, str: string | undefined) => str ?? '').replace(/,(\s*[}\]])/g, '$1');
  return JSON.parse(stripped) as Record<string, unknown>;
}

const modelOf = (m: ClawAgent['model']) => (typeof m === 'string' ? m : m?.primary);

function clawAgent(dir: string, a: ClawAgent, fallbackModel: string | undefined, items: Item[]): void {
  const workspace = a.workspace
    ? path.resolve(dir, a.workspace.replace(/^~(?=\/)/, path.dirname(dir)))
    : path.join(dir, a.id === 'main' ? 'workspace' : `workspace-${a.id}`);
  const [provider, ...rest] = (modelOf(a.model) ?? fallbackModel ?? 'default/default').split('/');
  const model = rest.join('/') || 'default';
  const prompt = ['IDENTITY.md', 'SOUL.md', 'AGENTS.md']
    .map((f) => read(path.join(workspace, f))?.trim())
    .filter(Boolean)
    .join('\n\n')
    .slice(0, 20_000);
  const manifest = {
    name: a.id,
    description: `Imported from OpenClaw${a.name ? ` (${a.name})` : ''}`,
    model: { provider: rest.length ? provider : 'default', model, ...(prompt ? { system_prompt: prompt } : {}) },
  };
  items.push({ kind: 'agent', name: a.id, manifestToml: stringify(manifest), provider: manifest.model.provider, model });
  memories(a.id, read(path.join(workspace, 'MEMORY.md')), items);
  skillsIn(path.join(workspace, 'skills'), items);
  const sessions = path.join(dir, 'agents', a.id, 'sessions');
  const logs = isDir(sessions) ? readdirSync(sessions).filter((f) => f.endsWith('.jsonl')) : [];
  for (const f of logs)
    items.push({
      kind: 'session',
      name: `${a.id}/${f.replace(/\.jsonl$/, '')}`,
      reason: 'session transcripts are not imported: Talon agents offer no session import',
    });
}

function scanClaw(dir: string): Plan {
  const items: Item[] = [];
  const warnings: string[] = [];
  const file = ['openclaw.json', 'clawdbot.json'].map((f) => path.join(dir, f)).find(existsSync);
  let config: Record<string, unknown> = {};
  try {
    config = file ? parseJson5(readFileSync(file, 'utf8')) : {};
  } catch (err) {
    warnings.push(`${path.basename(file!)} does not parse: ${(err as Error).message}`);
  }
  const agents = (config.agents ?? {}) as { list?: ClawAgent[]; defaults?: { model?: ClawAgent['model'] } };
  const list = agents.list?.length ? agents.list : [{ id: 'main' }];
  for (const a of list) if (typeof a.id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(a.id)) clawAgent(dir, a, modelOf(agents.defaults?.model), items);
  skillsIn(path.join(dir, 'skills'), items);
  for (const ch of Object.keys((config.channels ?? {}) as object))
    items.push({ kind: 'channel', name: ch, reason: 'channel tokens are not copied: configure the channel in Talon' });
  const cron = read(path.join(dir, 'cron', 'jobs.json'));
  if (cron) {
    try {
      const parsed = JSON.parse(cron) as { jobs?: ClawJob[] };
      const agentNames = new Set(items.filter((i) => i.kind === 'agent').map((i) => i.name));
      for (const j of parsed.jobs ?? []) items.push(clawSchedule(j, agentNames));
    } catch {
      warnings.push('cron/jobs.json does not parse');
    }
  }
  if (existsSync(path.join(dir, 'credentials')) || existsSync(path.join(dir, 'auth-profiles.json')))
    warnings.push('credentials are never imported: set provider keys with POST /api/providers/{name}/key');
  return { source: 'openclaw', path: dir, items, warnings };
}

export function scanHome(source: Source, dir: string): Plan {
  return source === 'openclaw' ? scanClaw(dir) : scanFang(source, dir);
}
