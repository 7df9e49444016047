import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setConfig, startTestKernel, type TestKernel } from '@talon/testing';
import type { AgentTools } from '@talon/agents';

// Loaded the way a user loads a third-party module: module_paths names the folder that holds it.
const examples = path.resolve(import.meta.dirname, '../..');
const config = (section = '') => `module_paths = [${JSON.stringify(examples)}]\n[slug]\n${section}`;
// error-envelope gives the service's {error} answers, as in a full service.
const only = ['slug', 'error-envelope'];
let k: TestKernel;

before(async () => {
  k = await startTestKernel({ only, config: config() });
});
after(() => k.stop());

test('the module runs as a third-party module and its migration is recorded', () => {
  const info = k.kernel.modules().find((m) => m.id === 'slug');
  assert.equal(info?.state, 'running', info?.error);
  assert.equal(info?.thirdParty, true);
  const row = k.kernel.database.prepare("SELECT id FROM kernel_migrations WHERE module = 'slug'").get();
  assert.deepEqual(row, { id: '0001_slugs' });
});

test('GET /api/slug makes a slug with the npm package (transliterated, lower case)', async () => {
  const res = await k.request(`/api/slug?text=${encodeURIComponent('  Crème Brûlée & Co. ')}`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { slug: 'creme-brulee-and-co' });
});

test('a text without letters or digits is refused with a 400 naming it', async () => {
  const res = await k.request(`/api/slug?text=${encodeURIComponent('?!')}`);
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /'\?!' has no letters or digits/);
});

test('POST /api/slugs reserves unique slugs, kept in its table', async () => {
  const reserve = async (title: string) => {
    const res = await k.request('/api/slugs', { method: 'POST', json: { title } });
    assert.equal(res.status, 201);
    return (await res.json()) as { slug: string; title: string };
  };
  assert.equal((await reserve('Hello World')).slug, 'hello-world');
  assert.equal((await reserve('hello, world!')).slug, 'hello-world-2');
  const found = await k.request('/api/slugs/hello-world-2');
  assert.equal(found.status, 200);
  assert.equal(((await found.json()) as { title: string }).title, 'hello, world!');
  assert.equal((await k.request('/api/slugs/not-reserved')).status, 404);
});

test('a change of its config section applies to the next slug', async () => {
  await setConfig(k, 'slug.separator', '_');
  await setConfig(k, 'slug.max_length', 8);
  try {
    const res = await k.request(`/api/slug?text=${encodeURIComponent('one two three four')}`);
    // Cut to 8 characters, without a dangling separator: 'one_two', not 'one_two_'.
    assert.deepEqual(await res.json(), { slug: 'one_two' });
  } finally {
    await setConfig(k, 'slug.separator', '-');
    await setConfig(k, 'slug.max_length', 60);
  }
});

test('an invalid value in its config section stops start-up, naming the key', async () => {
  // Stopped if it starts after all, so a failing check does not leave a kernel keeping the process alive.
  await assert.rejects(
    startTestKernel({ only, config: config('separator = "+"\n') }).then((started) => started.stop()),
    /'slug.separator'/,
  );
});

test('with the agents module running, agents get the slugify tool (a contract import, type-checked through paths)', async () => {
  const withAgents = await startTestKernel({ only: ['slug', 'agents', 'error-envelope'], config: config() });
  try {
    const tools = withAgents.kernel.services.view<AgentTools>('agents.tools');
    const signal = new AbortController().signal;
    const made = await tools.invoke({ tool: 'slugify', input: { text: 'Crème Brûlée' }, signal, origin: 'test' });
    assert.deepEqual(made.output, { content: 'creme-brulee' });
    const refused = await tools.invoke({ tool: 'slugify', input: { text: '?!' }, signal, origin: 'test' });
    assert.equal(refused.output.isError, true);
    assert.match(refused.output.content, /has no letters or digits/);
  } finally {
    await withAgents.stop();
  }
  // Without it the module runs alone (optional_depends), as in the tests above.
  assert.equal(k.kernel.modules().find((m) => m.id === 'slug')?.state, 'running');
});
