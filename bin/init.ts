/**
 * `talon init` (`npm run init`): the first run in a terminal, the steps of the dashboard's guided setup
 * (modules/system/dashboard/first-run.ts) against the running service's API: choose a provider, store and test its key,
 * make a model the default, create a first agent from a template. Each answer can be given as a flag; `--yes` asks
 * nothing and takes the first choice for what no flag gives (scripts, tests). Keys are read from a variable
 * (`--key-env`) or typed with the echo off, never taken as a flag (a command line is visible to other users).
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { parse } from 'smol-toml';
import {
  modelChoices,
  providerChoices,
  setDefaultModel,
  spawnFromTemplate,
  storeKey,
  templates,
  testProvider,
  type Call,
  type ProviderChoice,
} from '../modules/system/dashboard/first-run.ts';

const USAGE = `talon init [--url http://127.0.0.1:4545] [--provider NAME] [--key-env VAR] [--model ID] [--template NAME|none] [--yes]
  The service must be running (npm start). TALON_API_KEY is sent when the service wants a key.`;

const FLAGS = {
  url: { type: 'string' },
  provider: { type: 'string' },
  'key-env': { type: 'string' },
  model: { type: 'string' },
  template: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The service's address: --url, TALON_URL, else TALON_API_LISTEN or api_listen of $TALON_HOME/config.toml. */
function serviceUrl(given: string | undefined): string {
  const url = given ?? process.env.TALON_URL;
  if (url) return url.replace(/\/+$/, '');
  const home = process.env.TALON_HOME?.trim().replace(/^~(?=$|\/)/, os.homedir()) || path.join(os.homedir(), '.talon');
  const file = path.join(home, 'config.toml');
  const listen = process.env.TALON_API_LISTEN ?? (existsSync(file) ? (parse(readFileSync(file, 'utf8')).api_listen as string | undefined) : undefined);
  return `http://${listen ?? '127.0.0.1:4545'}`;
}

function client(base: string): Call {
  return async <T>(p: string, init: { method?: string; json?: unknown } = {}): Promise<T> => {
    const headers: Record<string, string> = init.json !== undefined ? { 'content-type': 'application/json' } : {};
    if (process.env.TALON_API_KEY) headers.authorization = `Bearer ${process.env.TALON_API_KEY}`;
    let res: Response;
    try {
      res = await fetch(base + p, {
        method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
        headers,
        body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
      });
    } catch {
      throw new Error(`the service does not answer at ${base}: start it (npm start) or give its address with --url`);
    }
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    if (!res.ok) throw new Error(`${p} answered ${res.status}: ${body.error ?? res.statusText}`);
    return body as T;
  };
}

/** Questions on the terminal or piped lines; a secret is read with the echo off. */
function prompter() {
  let muted = false;
  const output = new Writable({
    write(chunk, encoding, done) {
      if (!muted) process.stdout.write(chunk, encoding);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: process.stdin.isTTY });
  // Lines read through the iterator, not rl.question: piped lines that arrive before their question are kept.
  const lines = rl[Symbol.asyncIterator]();
  async function ask(question: string, secret = false): Promise<string> {
    process.stdout.write(question);
    muted = secret && process.stdin.isTTY;
    const next = await lines.next();
    if (muted) process.stdout.write('\n');
    muted = false;
    if (next.done) throw new Error('no more input');
    return next.value.trim();
  }
  /** One of `options` by number or name; Enter takes the first. */
  async function choose(what: string, options: { value: string; label: string }[]): Promise<string> {
    options.forEach((o, i) => process.stdout.write(`  ${i + 1}. ${o.label}\n`));
    for (;;) {
      const answer = await ask(`${what} [1]: `);
      if (!answer) return options[0].value;
      const found = options[Number(answer) - 1] ?? options.find((o) => o.value === answer);
      if (found) return found.value;
      process.stdout.write(`  not one of the ${options.length} above\n`);
    }
  }
  return { ask, choose, close: () => rl.close() };
}

const keyWords = (c: ProviderChoice) =>
  c.provider.key_source === 'stored'
    ? 'stored key'
    : c.provider.key_source === 'environment'
      ? `key from ${c.provider.env_var}`
      : c.detected?.reachable
        ? `local, at ${c.detected.base_url}`
        : c.provider.key_required
          ? 'no key yet'
          : 'no key needed';

export async function runInit(argv: string[]): Promise<number> {
  const { values: flags } = parseArgs({ args: argv, options: FLAGS, strict: true });
  if (flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const base = serviceUrl(flags.url);
  const call = client(base);
  const io = prompter();
  const interactive = !flags.yes;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const choices = await providerChoices(call);
    const providerName =
      flags.provider ??
      (interactive
        ? await io.choose(
            'Provider',
            choices.slice(0, 20).map((c) => ({ value: c.provider.name, label: `${c.provider.display_name} (${c.provider.name}): ${keyWords(c)}` })),
          )
        : choices[0]?.provider.name);
    const choice = choices.find((c) => c.provider.name === providerName);
    if (!choice) throw new Error(`no provider '${providerName}' (GET /api/providers lists them)`);
    const p = choice.provider;

    if (p.key_required || p.env_var) {
      let key = flags['key-env'] ? process.env[flags['key-env']]?.trim() : undefined;
      if (flags['key-env'] && !key) throw new Error(`--key-env ${flags['key-env']}: that variable is empty or unset`);
      if (key === undefined && interactive)
        key = await io.ask(
          p.key_source === 'none' ? `API key for ${p.display_name}: ` : `API key for ${p.display_name} (Enter keeps the ${keyWords(choice)}): `,
          true,
        );
      if (key) {
        await storeKey(call, p.name, key);
        say(`Stored the key for ${p.display_name} (sealed; never shown back).`);
      } else if (p.key_source === 'none' && p.key_required) throw new Error(`${p.display_name} needs a key: --key-env VAR, or run without --yes to type it`);
    }

    const tested = await testProvider(call, p.name);
    say(`${p.display_name} answers${tested.latency_ms !== undefined ? ` (${tested.latency_ms} ms)` : ''}.`);

    const models = await modelChoices(call, p.name, tested.models);
    const model =
      flags.model ??
      (interactive
        ? await io.choose(
            'Default model',
            models.slice(0, 20).map((id) => ({ value: id, label: id })),
          )
        : models[0]);
    if (!model) throw new Error(`${p.display_name} lists no model: give one with --model`);
    await setDefaultModel(call, p.name, model);
    say(`Default model: ${p.name}/${model}.`);

    const list = await templates(call);
    const fallback = list.find((t) => t.name === 'assistant')?.name ?? list[0]?.name;
    const template =
      flags.template ??
      (interactive
        ? await io.choose('First agent from the template (or "none")', [
            ...[...list]
              .sort((a, b) => Number(b.name === fallback) - Number(a.name === fallback))
              .map((t) => ({ value: t.name, label: `${t.name}: ${t.description}` })),
            { value: 'none', label: 'none: no agent now' },
          ])
        : fallback);
    if (template && template !== 'none') {
      const id = await spawnFromTemplate(call, template);
      say(`Agent '${template}' created: chat with it at ${base}/#/chat/${id}`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`talon init: ${(err as Error).message}\n`);
    return 1;
  } finally {
    io.close();
  }
}
