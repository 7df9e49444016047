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
  put(root, 'data/cron_jobs.json', JSON.stringify([{ id: 'j1', name: 'daily digest' }]));
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
  put(root, 'cron/jobs.json', JSON.stringify({ jobs: [{ id: 'c1', name: 'morning brief' }] }));
}
