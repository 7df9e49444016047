/** Small homes in the formats of the systems we import from, written by the tests (our own content). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function put(root: string, rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

/** ~/.librefang (the same layout as ~/.openfang). */
export function fangHome(root: string): void {
  put(
    root,
    'config.toml',
    'api_listen = "127.0.0.1:4545"\napi_key = "do-not-copy-me"\n[default_model]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n[channels.telegram]\nbot_token_env = "TG_TOKEN"\n',
  );
  put(
    root,
    'agents/researcher/agent.toml',
    'name = "researcher"\ndescription = "Finds things"\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You research."\n[capabilities]\ntools = ["web_fetch"]\n',
  );
  put(root, 'agents/broken/agent.toml', 'name = "broken\n');
  put(root, 'skills/summarise/SKILL.md', '---\nname: summarise\ndescription: Summarise text\n---\nSummarise.\n');
  // data/cron_jobs.json: {job, one_shot, last_status, consecutive_errors, auto_disabled} per job. The first names
  // its agent; the second only by a database UUID; the third is no agent turn.
  const job = (id: string, name: string, extra: Record<string, unknown>) => ({
    job: { id, name, agent_id: '5f0c7a4e-0000-4000-8000-00000000a001', enabled: true, ...extra },
    one_shot: false,
    last_status: 'ok',
    consecutive_errors: 0,
    auto_disabled: false,
  });
  put(
    root,
    'data/cron_jobs.json',
    JSON.stringify([
      job('j1', 'daily digest', {
        agent_name: 'researcher',
        schedule: { kind: 'cron', expr: '0 8 * * 1-5', tz: 'America/New_York' },
        action: { kind: 'agent_turn', message: 'Digest the news.' },
      }),
      job('j2', 'orphan', { schedule: { kind: 'every', every_secs: 3600 }, action: { kind: 'agent_turn', message: 'Hello?' } }),
      job('j3', 'wake', { agent_name: 'researcher', schedule: { kind: 'every', every_secs: 600 }, action: { kind: 'system_event', text: 'wake up' } }),
    ]),
  );
}

/** ~/.openclaw: openclaw.json (JSON5), a workspace with identity and memory files, session logs, cron jobs. */
export function clawHome(root: string): void {
  put(
    root,
    'openclaw.json',
    `{
  // agents of this gateway
  "agents": {
    "defaults": { "model": { "primary": "anthropic/claude-sonnet-4-5" } },
    "list": [{ "id": "main", "name": "Jack" }, { "id": "sarah", "workspace": "${root}/workspace-sarah", "model": "openai/gpt-4o" },],
  },
  /* tokens stay where they are */
  "channels": { "telegram": { "botToken": "123:secret // not a comment" } },
}`,
  );
  put(root, 'workspace/SOUL.md', 'You are Jack, calm and precise.');
  put(root, 'workspace/MEMORY.md', '# Memory\n\n- The user lives in Lisbon.\n- The user prefers short answers.\n');
  put(root, 'workspace/skills/weather/SKILL.md', '---\nname: weather\ndescription: Weather\n---\nAsk the weather tool.\n');
  put(root, 'workspace-sarah/IDENTITY.md', 'You are Sarah.');
  put(root, 'agents/main/sessions/abc.jsonl', '{"type":"message","message":{"role":"user","content":"hi"}}\n');
  // cron/jobs.json: {version: 1, jobs}; a job without agentId belongs to `main`.
  put(
    root,
    'cron/jobs.json',
    JSON.stringify({
      version: 1,
      jobs: [
        {
          id: 'c1',
          name: 'morning brief',
          enabled: true,
          schedule: { kind: 'cron', expr: '0 7 * * *', tz: 'Europe/Lisbon' },
          sessionTarget: 'isolated',
          wakeMode: 'now',
          payload: { kind: 'agentTurn', message: 'Brief me on the day.' },
          state: {},
        },
        {
          id: 'c2',
          agentId: 'sarah',
          name: 'hourly ping',
          enabled: false,
          schedule: { kind: 'every', everyMs: 3_600_000 },
          sessionTarget: 'main',
          wakeMode: 'now',
          payload: { kind: 'agentTurn', message: 'ping' },
          state: {},
        },
        {
          id: 'c3',
          name: 'heartbeat',
          enabled: true,
          schedule: { kind: 'every', everyMs: 60_000 },
          sessionTarget: 'main',
          payload: { kind: 'systemEvent', text: 'beat' },
          state: {},
        },
      ],
    }),
  );
}
