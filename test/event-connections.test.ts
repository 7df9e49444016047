/**
 * Module events are connections like services and hooks: the owner declares them (defineEvents in its contract, listed
 * in defineModule) and alone publishes them; a subscriber declares the owner in module.toml, and '*' needs
 * `all_events = true`. Each rule fails the module at load, naming what to add where.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import { manifest, tempModules } from './support/temp-modules.ts';

const bellContract = `import { defineEvents, payload } from '@talon/module-sdk';
export const bellEvents = defineEvents('bell', { 'bell.rang': payload<{ n: number }>(), 'bell.cracked': payload<{ why: string }>() });
`;
/** A subscriber of bell.* that answers what it heard. */
const listener = (catalogue: string) => `import { defineModule, defineEvents, payload } from '@talon/module-sdk';
${catalogue}
export default defineModule({
  register(ctx) {
    const heard: string[] = [];
    ctx.events.of(bellEvents).subscribe('bell.*', (e) => void heard.push(e.type));
    return { routes(app) { app.get('/api/' + ctx.id, async () => ({ heard })); } };
  },
});
`;
const mods = tempModules({
  bell: {
    'module.toml': manifest({ name: 'bell' }),
    'api.ts': bellContract,
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { bellEvents } from '@talon/bell';
export default defineModule({
  events: [bellEvents],
  register(ctx) {
    const events = ctx.events.of(bellEvents);
    return { routes(app) { app.post('/api/ring', async () => {
      events.publish('bell.rang', { n: 1 });
      events.publish('bell.cracked', { why: 'cold' });
      return { ok: true };
    }); } };
  },
});
`,
  },
  // Declares the bell's events only (consumes "bell.events") and imports its contract.
  ear: {
    'module.toml': manifest({ name: 'ear', consumes: ['bell.events'] }),
    'index.ts': listener("import { bellEvents } from '@talon/bell';"),
  },
  // Builds the catalogue itself to dodge the contract-import check: the subscription is still undeclared.
  deaf: {
    'module.toml': manifest({ name: 'deaf' }),
    'index.ts': listener("const bellEvents = defineEvents('bell', { 'bell.rang': payload<{ n: number }>() });"),
  },
  // Names the bell's events in a catalogue under its own name, declaring nothing: it must hear none of them.
  mimic: {
    'module.toml': manifest({ name: 'mimic' }),
    'index.ts': listener("const bellEvents = defineEvents('mimic', { 'bell.rang': payload<{ n: number }>(), 'bell.cracked': payload<{ why: string }>() });"),
  },
  // Everything, without saying so.
  peeker: {
    'module.toml': manifest({ name: 'peeker' }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
export default defineModule({ register(ctx) { ctx.events.subscribe('*', () => undefined); } });
`,
  },
  // Everything, declared.
  observer: {
    'module.toml': manifest({ name: 'observer', all_events: true }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
export default defineModule({
  register(ctx) {
    const seen: string[] = [];
    ctx.events.subscribe('*', (e) => void seen.push(e.source + ':' + e.type));
    return { routes(app) { app.get('/api/observer', async () => ({ seen })); } };
  },
});
`,
  },
  // A declared subscriber that publishes the bell's event.
  forger: {
    'module.toml': manifest({ name: 'forger', depends: ['bell'] }),
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { bellEvents } from '@talon/bell';
export default defineModule({ register(ctx) { ctx.events.of(bellEvents).publish('bell.rang', { n: 2 }); } });
`,
  },
  // Claims the bell's event name in a catalogue of its own.
  squatter: {
    'module.toml': manifest({ name: 'squatter', depends: ['bell'] }),
    'api.ts': `import { defineEvents, payload } from '@talon/module-sdk';
export const mine = defineEvents('squatter', { 'bell.rang': payload<{ n: number }>() });
`,
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { mine } from '@talon/squatter';
export default defineModule({ events: [mine] });
`,
  },
  // Publishes its own events without listing the catalogue in defineModule.
  unlisted: {
    'module.toml': manifest({ name: 'unlisted' }),
    'api.ts': `import { defineEvents, payload } from '@talon/module-sdk';
export const unlistedEvents = defineEvents('unlisted', { 'unlisted.said': payload<{ text: string }>() });
`,
    'index.ts': `import { defineModule } from '@talon/module-sdk';
import { unlistedEvents } from '@talon/unlisted';
export default defineModule({ register(ctx) { ctx.events.of(unlistedEvents).publish('unlisted.said', { text: 'hi' }); } });
`,
  },
});
after(() => mods.remove());

const boot = (only: string[]) => startTestKernel({ only, config: `module_paths = ["${mods.root}"]\n` });
const state = (k: TestKernel, id: string) => k.kernel.modules().find((m) => m.id === id)!;
const json = async <T>(k: TestKernel, url: string, init?: RequestInit) => (await (await k.request(url, init)).json()) as T;

test("a declared subscriber hears the owner's events, 'task.*' patterns included; '*' declared hears all", async () => {
  const k = await boot(['bell', 'ear', 'observer']);
  try {
    assert.deepEqual(await json(k, '/api/ring', { method: 'POST' }), { ok: true });
    await waitFor(async () => (await json<{ heard: string[] }>(k, '/api/ear')).heard.length === 2, 5_000, 'the bell in the ear');
    assert.deepEqual((await json<{ heard: string[] }>(k, '/api/ear')).heard, ['bell.rang', 'bell.cracked']);
    await waitFor(async () => (await json<{ seen: string[] }>(k, '/api/observer')).seen.length === 2, 5_000, 'the observer');
    assert.deepEqual((await json<{ seen: string[] }>(k, '/api/observer')).seen, ['bell:bell.rang', 'bell:bell.cracked']);
  } finally {
    await k.stop();
  }
});

test('an undeclared subscription fails the subscriber at load, naming both modules and what to add where', async () => {
  const k = await boot(['bell', 'deaf']);
  try {
    assert.equal(state(k, 'deaf').state, 'failed');
    assert.match(
      state(k, 'deaf').error!,
      /module 'deaf' subscribes to events of module 'bell' without declaring it: add 'bell' to depends, optional_depends or consumes in .*deaf[\\/]module\.toml/,
    );
    assert.equal(state(k, 'bell').state, 'running', 'the owner is not affected');
  } finally {
    await k.stop();
  }
});

test("'*' without all_events = true fails the module at load", async () => {
  const k = await boot(['peeker']);
  try {
    assert.equal(state(k, 'peeker').state, 'failed');
    assert.match(
      state(k, 'peeker').error!,
      /module 'peeker' subscribes to every module's events \('\*'\) without declaring it: add all_events = true to .*peeker[\\/]module\.toml/,
    );
  } finally {
    await k.stop();
  }
});

test("publishing another module's event is refused: through its catalogue, under a catalogue of one's own, or unlisted", async () => {
  const k = await boot(['bell', 'forger', 'squatter', 'unlisted']);
  try {
    assert.match(state(k, 'forger').error!, /module 'forger' publishes 'bell.rang', an event of module 'bell': only its owner may/);
    assert.match(state(k, 'squatter').error!, /event 'bell.rang' is owned by module 'bell'/);
    assert.match(state(k, 'unlisted').error!, /module 'unlisted' publishes 'unlisted.said', but lists no catalogue with it in defineModule\(\{ events \}\)/);
    assert.equal(state(k, 'bell').state, 'running');
  } finally {
    await k.stop();
  }
});

test("a catalogue of one's own naming another module's events hears none of them", async () => {
  const k = await boot(['bell', 'mimic', 'ear']);
  try {
    assert.equal(state(k, 'mimic').state, 'running');
    await json(k, '/api/ring', { method: 'POST' });
    await waitFor(async () => (await json<{ heard: string[] }>(k, '/api/ear')).heard.length === 2, 5_000, 'the bell in the ear');
    assert.deepEqual((await json<{ heard: string[] }>(k, '/api/mimic')).heard, []);
  } finally {
    await k.stop();
  }
});
