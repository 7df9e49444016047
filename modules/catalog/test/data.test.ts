import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { ChangeFeed } from '@talon/module-sdk';
import { openTestStore } from '@talon/testing';
import type { ProviderKeys } from '@talon/secrets';
import { checkProviderFile, loadAliasFile, loadProviderDir } from '../services/files.ts';
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

/** The unit each media kind is priced in: the media module meters each kind in this unit. */
const UNIT_OF_KIND: Record<string, string> = { image: 'images', speech: 'characters', transcription: 'seconds', video: 'seconds', music: 'songs' };
const CAPABILITY_OF_KIND: Record<string, string> = {
  image: 'ImageGeneration',
  speech: 'TextToSpeech',
  transcription: 'Transcription',
  video: 'VideoGeneration',
  music: 'MusicGeneration',
};

test('shipped media: providers declare their capabilities, every price fits its kind and its provider offers the kind', () => {
  const files = new Map(loadProviderDir(path.join(dataDir, 'providers')).files.map((f) => [f.provider.id, f]));
  const caps = (id: string) => files.get(id)?.provider.media_capabilities;
  assert.deepEqual(caps('openai'), ['ImageGeneration', 'TextToSpeech', 'Transcription']);
  assert.deepEqual(caps('gemini'), ['ImageGeneration', 'VideoGeneration']);
  assert.deepEqual(caps('minimax'), ['ImageGeneration', 'TextToSpeech', 'VideoGeneration', 'MusicGeneration', 'Transcription']);
  assert.deepEqual(caps('groq'), ['Transcription']);
  assert.deepEqual(caps('elevenlabs'), ['TextToSpeech', 'Transcription']);
  assert.deepEqual(caps('anthropic'), [], 'the default is none');
  const eleven = files.get('elevenlabs')!;
  assert.equal(eleven.provider.env_var, 'ELEVENLABS_API_KEY');
  assert.equal(eleven.provider.key_required, true);
  assert.deepEqual(eleven.models, [], 'ElevenLabs has no chat models');
  let priced = 0;
  for (const f of files.values()) {
    for (const m of f.media_models) {
      priced++;
      assert.equal(m.unit, UNIT_OF_KIND[m.kind], `${f.provider.id}/${m.id} is priced per ${m.unit}`);
      assert.ok(m.usd_per_unit > 0 && m.usd_per_unit < 1, `${f.provider.id}/${m.id} price ${m.usd_per_unit}`);
      assert.ok(caps(f.provider.id)?.includes(CAPABILITY_OF_KIND[m.kind] as never), `${f.provider.id} prices ${m.kind} without the capability`);
    }
  }
  assert.ok(priced >= 25, `${priced} media prices`);
});

test('media fields are validated: capability names, kinds, units, prices and duplicate ids', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'catalog-media-'));
  const head = (id: string, caps = '["TextToSpeech"]') =>
    `[provider]\nid = "${id}"\ndisplay_name = "X"\napi_format = "x"\nbase_url = "http://x"\nmedia_capabilities = ${caps}\n`;
  const media = (id: string, kind = 'speech', unit = 'characters', price = '0.001') =>
    `\n[[media_models]]\nid = "${id}"\nkind = "${kind}"\nunit = "${unit}"\nusd_per_unit = ${price}\n`;
  try {
    writeFileSync(path.join(dir, 'a-good.toml'), head('good') + media('s-1'));
    writeFileSync(path.join(dir, 'b-cap.toml'), head('cap', '["text_to_speech"]'));
    writeFileSync(path.join(dir, 'c-kind.toml'), head('kind') + media('s-1', 'podcast'));
    writeFileSync(path.join(dir, 'd-unit.toml'), head('unit') + media('s-1', 'speech', 'words'));
    writeFileSync(path.join(dir, 'e-price.toml'), head('price') + media('s-1', 'speech', 'characters', '-1'));
    writeFileSync(path.join(dir, 'f-twice.toml'), head('twice') + media('s-1') + media('s-1'));
    const loaded = loadProviderDir(dir);
    assert.deepEqual(
      loaded.files.map((f) => f.provider.id),
      ['good'],
    );
    const errors = loaded.errors.join('\n');
    assert.match(errors, /b-cap\.toml: \/provider\/media_capabilities\/0 must be equal to one of the allowed values/);
    assert.match(errors, /c-kind\.toml: \/media_models\/0\/kind must be equal to one of the allowed values/);
    assert.match(errors, /d-unit\.toml: \/media_models\/0\/unit must be equal to one of the allowed values/);
    assert.match(errors, /e-price\.toml: \/media_models\/0\/usd_per_unit must be >= 0/);
    assert.match(errors, /f-twice\.toml: media model 's-1' is listed twice/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mediaPrice: by provider (or another name of it) and model id; a model of another provider or none is unpriced', () =>
  inHome(async (home) => {
    const s = await store(home);
    assert.deepEqual(s.mediaPrice('openai', 'dall-e-3'), { unit: 'images', usd_per_unit: 0.04 });
    assert.deepEqual(s.mediaPrice('openai', 'tts-1'), { unit: 'characters', usd_per_unit: 0.000015 });
    assert.deepEqual(s.mediaPrice('google', 'imagen-3.0-generate-002'), { unit: 'images', usd_per_unit: 0.03 });
    assert.deepEqual(s.mediaPrice('elevenlabs', 'scribe_v1')?.unit, 'seconds');
    assert.equal(s.mediaPrice('groq', 'whisper-1'), undefined, "whisper-1 is OpenAI's id: Groq's price is its own");
    assert.equal(s.mediaPrice('openai', 'no-such-model'), undefined);
    assert.equal(s.mediaPrice('local', 'flite'), undefined);
    assert.equal(s.mediaPrice('no-such-provider', 'dall-e-3'), undefined);
    assert.equal(s.cost('openai', 'dall-e-3', 1000, 1000), 0, 'a media model is no chat model');
    assert.deepEqual(s.provider('elevenlabs')?.media_capabilities, ['TextToSpeech', 'Transcription']);
    assert.equal(s.provider('anthropic')?.media_capabilities, undefined);
    assert.deepEqual(s.models({ provider: 'elevenlabs' }), []);
  }));

test('a registry update keeps media capabilities and prices, counts a changed price, and they survive a restart', () =>
  inHome(async (home) => {
    const s = await store(home);
    const shipped = loadProviderDir(path.join(dataDir, 'providers')).files;
    const providers = shipped.map((f) =>
      f.provider.id !== 'openai' ? f : { ...f, media_models: f.media_models.map((m) => (m.id === 'dall-e-3' ? { ...m, usd_per_unit: 0.08 } : m)) },
    );
    const acme = checkProviderFile(
      {
        provider: { id: 'acme', display_name: 'Acme', api_format: 'openai', base_url: 'https://acme.example/v1', media_capabilities: ['MusicGeneration'] },
        media_models: [{ id: 'acme-song', kind: 'music', unit: 'songs', usd_per_unit: 0.5 }],
      },
      'acme',
    );
    const content = { version: 'r2', source: 'test', providers: [...providers, acme], aliases: {} };
    assert.deepEqual(s.diff(content), { added: 1, updated: 1, removed: 0 });
    await s.applyRegistry(content);
    assert.deepEqual(s.mediaPrice('openai', 'dall-e-3'), { unit: 'images', usd_per_unit: 0.08 });
    assert.deepEqual(s.mediaPrice('acme', 'acme-song'), { unit: 'songs', usd_per_unit: 0.5 });
    assert.deepEqual(s.provider('acme')?.media_capabilities, ['MusicGeneration']);
    // Another start reads the kept registry file through the same validation.
    const again = await store(home);
    assert.deepEqual(again.mediaPrice('openai', 'dall-e-3'), { unit: 'images', usd_per_unit: 0.08 });
    assert.deepEqual(again.provider('acme')?.media_capabilities, ['MusicGeneration']);
  }));
