/**
 * POST /api/plugins/scaffold: a plugin folder for a runtime — plugin.toml declaring ingest and after_turn (the
 * other hooks written as stubs and listed commented out), the seven hook files, and a README with the protocol.
 * The plugin is installed as it is written; its hooks run once the context engine names it.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { badRequest, conflict } from '@talon/module-sdk';
import { PLUGIN_NAME } from './manifest.ts';
import { RUNTIME_SPECS, type Runtime } from './runtimes.ts';
import { PERSISTENT_TEMPLATES, TEMPLATES, type TemplateHook } from './scaffold-templates.ts';

const HOOKS: Array<[string, TemplateHook]> = [
  ['ingest', 'ingest'],
  ['after_turn', 'after_turn'],
  ['bootstrap', 'stub'],
  ['assemble', 'stub'],
  ['compact', 'stub'],
  ['prepare_subagent', 'stub'],
  ['merge_subagent', 'stub'],
];

const tomlString = (s: string) => JSON.stringify(s);

export function scaffoldFiles(name: string, description: string, runtime: Runtime): Record<string, string> {
  const ext = RUNTIME_SPECS[runtime].ext;
  const rel = (hook: string) => `hooks/${hook}${ext}`;
  const persistent = PERSISTENT_TEMPLATES.includes(runtime);
  const toml = [
    `name = ${tomlString(name)}`,
    'version = "0.1.0"',
    `description = ${tomlString(description)}`,
    'author = ""',
    '',
    '[hooks]',
    `runtime = "${runtime}"`,
    `ingest = "${rel('ingest')}"`,
    `after_turn = "${rel('after_turn')}"`,
    ...HOOKS.slice(2).map(([hook]) => `# ${hook} = "${rel(hook)}"`),
    '# Wall-clock limit of one call (at most 30 s) and what a failure does: warn, skip or abort.',
    'hook_timeout_secs = 30',
    'on_hook_failure = "warn"',
    persistent ? '# These hooks also answer one request per line: keep a process running between calls.\n# persistent_subprocess = true' : '',
    '# prespawn = true            # start the process of each next call ahead of it (the interpreter start leaves the turn)',
    '# allow_network = false      # no network unless true (enforced with a network namespace where available)',
    '',
  ].filter((l) => l !== '');
  const files: Record<string, string> = { 'plugin.toml': `${toml.join('\n')}\n` };
  for (const [hook, kind] of HOOKS) files[rel(hook)] = TEMPLATES[runtime](kind, name);
  if (runtime === 'python') files['requirements.txt'] = '# Python packages the hooks import (POST /api/plugins/{name}/install-deps installs them)\n';
  files['README.md'] = readme(name, description, runtime);
  return files;
}

function readme(name: string, description: string, runtime: Runtime): string {
  const spec = RUNTIME_SPECS[runtime];
  return `# ${name}

${description}

A context-engine plugin (runtime \`${runtime}\`${spec.launcher ? `, run with \`${[spec.launcher, ...spec.args].join(' ')} <hook>\`` : ', hooks are executables'}).

Each hook gets one JSON request on stdin (for example \`{"type": "ingest", "agent_id": "...", "message": "...", "peer_id": null}\`)
and prints its answer as a JSON line (for example \`{"type": "ingest_result", "memories": [{"content": "..."}]}\`). The
service reads stdout from the last line upward and uses the first line that parses as JSON, so log lines before the
answer are fine. A hook that runs over 30 s is killed; a failed hook leaves the default context engine in charge.

To run it for agents, name it in config.toml: \`[context_engine] plugin = "${name}"\` (or add it to \`plugin_stack\`).
`;
}

export function scaffold(pluginsDir: string, body: { name: string; description: string; runtime: Runtime }): { path: string; files: string[] } {
  if (!PLUGIN_NAME.test(body.name)) throw badRequest(`plugin name '${body.name}' must be letters, digits, '_' and '-' (at most 128)`);
  const target = path.join(pluginsDir, body.name);
  if (existsSync(target)) throw conflict(`a plugin named '${body.name}' already exists`);
  const files = scaffoldFiles(body.name, body.description, body.runtime);
  const tmp = path.join(pluginsDir, `.scaffold-${body.name}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true });
    writeFileSync(path.join(tmp, rel), text);
    if (rel.startsWith('hooks/')) chmodSync(path.join(tmp, rel), 0o755);
  }
  renameSync(tmp, target);
  return { path: target, files: Object.keys(files).sort() };
}
