import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ChangeFeed } from '@talon/module-sdk';
import { openTestStore } from '@talon/testing';
import type { ProviderKeys } from '@talon/secrets';
import { loadAliasFile, loadProviderDir } from '../services/files.ts';
import { Snapshot } from '../services/snapshot.ts';
import { CatalogStore } from '../services/store.ts';

const moduleDir = path.resolve(import.meta.dirname, '..');
const dataDir = path.join(moduleDir, 'bundled');
/** The catalog's migrations hand its old key rows to the secrets module's tables, so those come first. */
const secretsDir = path.resolve(moduleDir, '..', 'secrets');

test('every shipped provider file loads and validates', () => {
  const loaded = loadProviderDir(path.join(dataDir, 'providers'));
  assert.deepEqual(loaded.errors, []);
  const ids = loaded.files.map((f) => f.provider.id);
  assert.ok(ids.length >= 49, `${ids.length} providers`);
  const models = loaded.files.flatMap((f) => f.models);
  assert.ok(models.length >= 130, `${models.length} models`);
  for (const name of ['openai', 'anthropic', 'gemini', 'ollama', 'groq', 'openrouter', 'deepseek', 'lmstudio', 'vllm', 'llamacpp', 'github-copilot'])
    assert.ok(ids.includes(name), name);
  assert.deepEqual(readdirSync(path.join(dataDir, 'providers')).sort(), ids.map((id) => `${id}.toml`).sort(), 'one file per provider, named by its id');
  for (const f of loaded.files) {
    if (f.provider.key_required) assert.ok(f.provider.env_var, `${f.provider.id} needs a key but names no env var`);
    for (const m of f.models) {
      assert.ok(m.context_window >= 1000, `${m.id} context window`);
      assert.ok(m.input_cost_per_1m >= 0 && m.output_cost_per_1m >= 0);
    }
  }
});

test('the merged catalogue has unique ids and every alias resolves', () => {
  const loaded = loadProviderDir(path.join(dataDir, 'providers'));
  const snap = new Snapshot({
    providerFiles: [loaded.files],
    aliasFiles: [loadAliasFile(path.join(dataDir, 'aliases.toml'))],
    custom: [],
    userAliases: new Map(),
  });
  assert.deepEqual(snap.warnings, []);
  assert.ok(snap.models.size >= 130);
  for (const [alias, target] of snap.aliases) assert.ok(snap.models.has(target), `${alias} → ${target}`);
  assert.equal(snap.model('sonnet')?.provider, 'anthropic');
  assert.equal(snap.model('gpt-4o-mini')?.provider, 'openai');
  assert.ok(
    [...snap.models.keys()].some((id) => id.includes('/')),
    'some ids contain slashes',
  );
});

test('a bad file is reported and skipped, the good ones load', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'catalog-data-'));
  try {
    writeFileSync(
      path.join(dir, 'good.toml'),
      '[provider]\nid = "good"\ndisplay_name = "Good"\napi_format = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n\n[[models]]\nid = "g-1"\ndisplay_name = "G1"\ncontext_window = 8192\n',
    );
    // Any wire format name is accepted (a driver module may register it); a malformed one is not.
    writeFileSync(path.join(dir, 'other-format.toml'), '[provider]\nid = "other"\ndisplay_name = "Other"\napi_format = "soap"\nbase_url = "http://x"\n');
    writeFileSync(path.join(dir, 'bad-type.toml'), '[provider]\nid = "bad"\ndisplay_name = "Bad"\napi_format = "Soap API"\nbase_url = "http://x"\n');
    writeFileSync(path.join(dir, 'broken.toml'), '[provider\nid = ');
    const loaded = loadProviderDir(dir);
    assert.deepEqual(
      loaded.files.map((f) => f.provider.id),
      ['good', 'other'],
    );
    assert.equal(loaded.errors.length, 2);
    assert.match(loaded.errors.join('\n'), /bad-type\.toml: \/provider\/api_format must match pattern/);
    assert.match(loaded.errors.join('\n'), /broken\.toml/);
    // defaults applied
    const m = loaded.files[0].models[0];
    assert.equal(m.tier, 'balanced');
    assert.equal(m.supports_streaming, true);
    assert.equal(loaded.files[0].provider.key_required, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** No stored provider keys: these tests are about the catalogue's own layers. */
const noKeys: ProviderKeys = { get: () => undefined, set: async () => undefined, delete: async () => false };

/** A feed that notes nothing: these tests have one process. */
const noFeed: ChangeFeed = { note: async () => undefined, on: () => undefined };

/** A catalogue on a fresh store in `home`; closed with the home by `inHome`. */
async function store(home: string, settings: { provider_urls?: Record<string, string> } = {}): Promise<CatalogStore> {
  const opened = openTestStore([secretsDir, moduleDir]);
  closers.push(opened.close);
  const s = new CatalogStore({
    store: opened.store,
    changes: noFeed,
    keys: () => noKeys,
    log: pino({ level: 'silent' }),
    shippedDir: dataDir,
    home,
    stateDir: () => home,
    providerUrls: () => settings.provider_urls ?? {},
  });
  await s.load();
  return s;
}

const closers: Array<() => void> = [];

/** Runs fn with a temporary home, then removes it and closes the stores opened in it. */
async function inHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = mkdtempSync(path.join(tmpdir(), 'catalog-home-'));
  try {
    await fn(home);
  } finally {
    for (const close of closers.splice(0)) close();
    rmSync(home, { recursive: true, force: true });
  }
}

test('cost is priced per million tokens, by id or alias; unknown models cost 0', () =>
  inHome(async (home) => {
    const s = await store(home);
    const m = s.model('gpt-4o-mini')!;
    assert.equal(m.input_cost_per_1m, 0.15);
    assert.equal(m.output_cost_per_1m, 0.6);
    assert.ok(Math.abs(s.cost('openai', 'gpt-4o-mini', 1_000_000, 1_000_000) - 0.75) < 1e-12);
    assert.ok(Math.abs(s.cost('openai', 'gpt-4o-mini', 2000, 500) - (2000 * 0.15 + 500 * 0.6) / 1e6) < 1e-15);
    assert.ok(Math.abs(s.cost('anthropic', 'sonnet', 1000, 1000) - 0.018) < 1e-12);
    assert.equal(s.cost('openai', 'no-such-model', 1000, 1000), 0);
    assert.equal(s.cost('ollama', 'llama4', 5000, 5000), 0);
  }));

test('base URL precedence: PUT override, then provider_urls (the configured URL), then the catalogue; ollama drops /v1', () =>
  inHome(async (home) => {
    const s = await store(home, { provider_urls: { groq: 'http://127.0.0.1:9/groq/', ollama: 'http://127.0.0.1:11500/v1' } });
    assert.equal(s.baseUrl('openai'), 'https://api.openai.com/v1');
    assert.equal(s.baseUrl('groq'), 'http://127.0.0.1:9/groq');
    assert.equal(s.baseUrl('ollama'), 'http://127.0.0.1:11500');
    assert.equal(s.configuredUrl('openai'), undefined, "the catalogue's URL is not a configured one");
    assert.equal(s.configuredUrl('groq'), 'http://127.0.0.1:9/groq/');
    await s.setUrl(s.provider('groq')!, 'http://127.0.0.1:10/override');
    assert.equal(s.baseUrl('groq'), 'http://127.0.0.1:10/override');
    assert.equal(s.configuredUrl('groq'), 'http://127.0.0.1:10/override');
    assert.equal(s.baseUrl('nope'), undefined);
    assert.equal(s.provider('google')?.name, 'gemini');
  }));

test('user provider files under <home>/providers replace shipped ones and add new ones; bad ones are skipped', () =>
  inHome(async (home) => {
    mkdirSync(path.join(home, 'providers'));
    writeFileSync(
      path.join(home, 'providers', 'groq.toml'),
      '[provider]\nid = "groq"\ndisplay_name = "My Groq"\napi_format = "openai"\nbase_url = "http://127.0.0.1:7/v1"\nenv_var = "MY_GROQ"\n\n[[models]]\nid = "my-groq-model"\ndisplay_name = "Mine"\ncontext_window = 4096\naliases = ["mine"]\n',
    );
    writeFileSync(path.join(home, 'providers', 'broken.toml'), 'nonsense = [');
    writeFileSync(path.join(home, 'aliases.toml'), '[aliases]\n"fav" = "my-groq-model"\n');
    const s = await store(home);
    assert.equal(s.provider('groq')?.display_name, 'My Groq');
    assert.deepEqual(
      s.models({ provider: 'groq' }).map((m) => m.id),
      ['my-groq-model'],
    );
    assert.equal(s.model('mine')?.id, 'my-groq-model');
    assert.equal(s.resolveAlias('fav'), 'my-groq-model');
    assert.equal(s.resolveAlias('not-an-alias'), 'not-an-alias');
    assert.ok(s.provider('openai'));
  }));
