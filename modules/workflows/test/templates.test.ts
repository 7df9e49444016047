import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type FakeProvider } from '@talon/testing';
import { call, createWorkflow, prompts, spawn } from './helpers.ts';

type Json = Record<string, unknown>;
type Template = Json & { id: string; source: string; parameters: Json[]; steps: Json[] };
type Listing = { templates: Template[]; total: number; categories: Json[]; registry: Json | null };

const fixtureRegistry = path.join(import.meta.dirname, 'fixtures', 'registry');

describe('workflow templates: the hub registry and saved ones', () => {
  let fake: FakeProvider;
  let k: AgentTestKernel;
  let base: string;
  let registryDir: string;
  const list = async (query = '') => (await call<Listing>(k, `/api/workflow-templates${query}`)).body;
  const instantiate = (id: string, params: unknown, query = '') =>
    call<Json & { error?: string }>(k, `/api/workflow-templates/${id}/instantiate${query}`, { method: 'POST', json: params });

  before(async () => {
    base = mkdtempSync(path.join(tmpdir(), 'workflow-templates-'));
    registryDir = path.join(base, 'registry');
    cpSync(fixtureRegistry, registryDir, { recursive: true });
    k = await startAgentTestKernel({
      only: ['workflows', 'hub', 'error-envelope', 'system'],
      config: `[hub]\nregistry_url = "${registryDir}"\nsync_interval_secs = 0\n`,
    });
    fake = k.fake;
    await spawn(k, 'alpha');
  });
  after(async () => {
    await k?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  test('before the registry was ever synced, listing starts no download and shows only saved templates', async () => {
    const res = await list();
    assert.deepEqual(res.templates, []);
    assert.equal(res.registry?.revision, null);
    assert.equal((await call(k, '/api/hub/sync', { method: 'POST' })).status, 200);
  });

  test('GET /api/workflow-templates: the valid templates of the registry with every field; search and category', async () => {
    const res = await list();
    assert.deepEqual(
      res.templates.map((t) => t.id),
      ['brief', 'triage'],
      'the invalid one is left out',
    );
    assert.equal(res.total, 2);
    assert.deepEqual(res.categories, [
      { name: 'engineering', count: 1 },
      { name: 'writing', count: 1 },
    ]);
    assert.equal(res.registry?.offline, false);
    const brief = res.templates[0];
    assert.deepEqual(Object.keys(brief).sort(), ['category', 'created_at', 'description', 'i18n', 'id', 'name', 'parameters', 'source', 'steps', 'tags']);
    assert.equal(brief.source, 'registry:hub');
    assert.deepEqual(brief.parameters[2], { name: 'length', description: 'Words at most', param_type: 'number', default: 300, required: false });
    assert.deepEqual(brief.steps[2], {
      name: 'draft',
      prompt_template: 'Draft (formal: {{formal}}) from {{research}} and {{outline}}.',
      depends_on: ['research', 'outline'],
    });
    assert.deepEqual(
      (await list('?category=engineering')).templates.map((t) => t.id),
      ['triage'],
    );
    assert.deepEqual(
      (await list('?q=DEMO%20writer')).templates.map((t) => t.id),
      ['brief'],
      'every word, any case, in name, tags...',
    );
    assert.equal((await list('?q=nothing-like-this')).total, 0);
    assert.equal((await call(k, '/api/workflow-templates?colour=red')).status, 400);
  });

  test('GET /api/workflow-templates/{id}: one template; 404 for an unknown id', async () => {
    const one = await call<Template>(k, '/api/workflow-templates/triage');
    assert.equal(one.status, 200);
    assert.equal(one.body.name, 'Bug Triage');
    const missing = await call<{ error: string }>(k, '/api/workflow-templates/nope');
    assert.equal(missing.status, 404);
    assert.match(missing.body.error, /workflow template 'nope' not found/);
  });

  test('instantiate: 201 {workflow_id, template_id, status}; the workflow runs as a graph with the values filled in', async () => {
    const res = await instantiate('brief', { topic: 'otters', length: 150 }, '?agent=alpha&name=Otter%20brief');
    assert.equal(res.status, 201, res.body.error);
    assert.deepEqual(Object.keys(res.body).sort(), ['status', 'template_id', 'workflow_id']);
    assert.deepEqual([res.body.template_id, res.body.status], ['brief', 'instantiated']);
    const wf = (await call<Json & { steps: Json[] }>(k, `/api/workflows/${res.body.workflow_id}`)).body;
    assert.equal(wf.name, 'Otter brief');
    assert.deepEqual(
      wf.steps.map((s) => [s.name, s.agent_name, s.prompt, s.output_var, s.depends_on]),
      [
        ['research', 'alpha', 'Research otters for a general audience.', 'research', []],
        ['outline', 'alpha', 'Outline otters in 150 words.', 'outline', []],
        ['draft', 'alpha', 'Draft (formal: false) from {{research}} and {{outline}}.', 'draft', ['research', 'outline']],
      ],
    );
    fake.requests.length = 0;
    fake.setFallback({ text: 'unused' });
    fake.enqueue({ text: 'R', delayMs: 200 }, { text: 'O', delayMs: 200 }, { text: 'the brief' });
    const run = await call<Json>(k, `/api/workflows/${res.body.workflow_id}/run`, { method: 'POST', json: { input: '' } });
    assert.deepEqual([run.body.status, run.body.output], ['completed', 'the brief']);
    const sent = prompts(fake);
    assert.equal(sent.length, 3);
    assert.match(sent[2], /^Draft \(formal: false\) from (R and O|O and R)\.$/);
  });

  test('instantiate refuses what is wrong, naming it: a missing required parameter, a wrong type, an unknown parameter or agent, an unknown template', async () => {
    const cases: Array<[string, unknown, string, number, RegExp]> = [
      ['brief', {}, '?agent=alpha', 400, /missing required parameter: topic/],
      ['brief', { topic: 'x', length: '150' }, '?agent=alpha', 400, /parameter 'length' must be a number \(got "150"\)/],
      ['brief', { topic: 'x', formal: 'yes' }, '?agent=alpha', 400, /parameter 'formal' must be a boolean/],
      [
        'brief',
        { topic: 'x', colour: 'red' },
        '?agent=alpha',
        400,
        /unknown parameter 'colour': template 'brief' takes 'topic', 'audience', 'length', 'formal'/,
      ],
      [
        'brief',
        { topic: 'x' },
        '',
        400,
        /step 'research' runs on the agent chosen for the template: no agent has the id or name 'default' \(choose one with \?agent=/,
      ],
      ['brief', { topic: 'x' }, '?agent=ghost', 400, /'ghost'/],
      ['brief', { topic: { nested: true } }, '?agent=alpha', 400, /topic/],
      ['triage', { report: 'r', owner: 'nobody' }, '?agent=alpha', 400, /parameter 'owner': no agent has the id or name 'nobody'/],
      ['nope', {}, '', 404, /workflow template 'nope' not found/],
    ];
    for (const [id, params, query, status, error] of cases) {
      const res = await instantiate(id, params, query);
      assert.equal(res.status, status, `${id} ${JSON.stringify(params)} ${query}`);
      assert.match(String(res.body.error), error);
    }
    const empty = await call(k, '/api/workflow-templates/brief/instantiate?agent=alpha', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    assert.equal(empty.status, 400, 'an empty body is no parameters: topic is missing');
    const owner = await instantiate('triage', { report: 'crash on start', owner: 'alpha' }, '?agent=alpha');
    assert.equal(owner.status, 201);
    const wf = (await call<{ steps: Json[] }>(k, `/api/workflows/${owner.body.workflow_id}`)).body;
    assert.deepEqual(
      wf.steps.map((s) => s.prompt),
      ['Classify: crash on start', 'Reply about {{classify}} for alpha.'],
    );
  });

  test('save-as-template: 201 created with the parameters its prompts use; 409 when the id exists; replace: true → 200; it lists first and instantiates', async () => {
    const id = await createWorkflow(k, {
      name: 'Daily Digest!',
      description: 'digest of the day',
      steps: [
        { name: 'gather', agent_name: 'alpha', prompt: 'Gather news on {{topic}} from {{input}}', output_var: 'news' },
        { name: 'write', agent_name: 'alpha', prompt: 'Write for {{reader}}: {{news}}', mode: 'loop', max_iterations: 2, until: 'done' },
      ],
    });
    const saved = await call<{ status: string; template: Template }>(k, `/api/workflows/${id}/save-as-template`, {
      method: 'POST',
      json: { category: 'news' },
    });
    assert.equal(saved.status, 201);
    assert.equal(saved.body.status, 'created');
    const t = saved.body.template;
    assert.deepEqual([t.id, t.name, t.category, t.source], ['daily-digest', 'Daily Digest!', 'news', 'user']);
    assert.deepEqual(
      t.parameters.map((p) => [p.name, p.param_type, p.required]),
      [
        ['topic', 'string', true],
        ['reader', 'string', true],
      ],
    );
    assert.deepEqual(t.steps[1], {
      name: 'write',
      prompt_template: 'Write for {{reader}}: {{news}}',
      agent: 'alpha',
      mode: 'loop',
      max_iterations: 2,
      until: 'done',
    });
    const again = await call<{ error: string }>(k, `/api/workflows/${id}/save-as-template`, { method: 'POST' });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /'daily-digest' exists \(user\).*replace: true/);
    const replaced = await call<{ status: string }>(k, `/api/workflows/${id}/save-as-template`, { method: 'POST', json: { replace: true, tags: ['daily'] } });
    assert.deepEqual([replaced.status, replaced.body.status], [200, 'updated']);
    const listed = await list();
    assert.deepEqual(
      listed.templates.map((x) => [x.id, x.source]),
      [
        ['daily-digest', 'user'],
        ['brief', 'registry:hub'],
        ['triage', 'registry:hub'],
      ],
    );
    const made = await instantiate('daily-digest', { topic: 'otters', reader: 'kids' });
    assert.equal(made.status, 201, made.body.error);
    const wf = (await call<{ steps: Json[] }>(k, `/api/workflows/${made.body.workflow_id}`)).body;
    assert.deepEqual(
      wf.steps.map((s) => [s.prompt, s.mode, s.output_var]),
      [
        ['Gather news on otters from {{input}}', 'sequential', 'news'],
        ['Write for kids: {{news}}', 'loop', 'write'],
      ],
    );
  });

  test('a saved template may take the place of a registry one only with replace: true; DELETE removes saved ones only', async () => {
    const id = await createWorkflow(k, { name: 'my brief', steps: [{ name: 'one', agent_name: 'alpha', prompt: 'hello' }] });
    const clash = await call<{ error: string }>(k, `/api/workflows/${id}/save-as-template`, { method: 'POST', json: { id: 'brief' } });
    assert.equal(clash.status, 409);
    assert.match(clash.body.error, /\(registry:hub\)/);
    assert.equal((await call(k, `/api/workflows/${id}/save-as-template`, { method: 'POST', json: { id: 'brief', replace: true } })).status, 200);
    assert.equal((await call<Template>(k, '/api/workflow-templates/brief')).body.source, 'user');
    assert.deepEqual((await call(k, '/api/workflow-templates/brief', { method: 'DELETE' })).body, { status: 'removed', template_id: 'brief' });
    assert.equal((await call<Template>(k, '/api/workflow-templates/brief')).body.source, 'registry:hub', 'the registry one is back');
    const registryOne = await call<{ error: string }>(k, '/api/workflow-templates/brief', { method: 'DELETE' });
    assert.equal(registryOne.status, 409);
    assert.match(registryOne.body.error, /comes from the hub registry/);
    assert.equal((await call(k, '/api/workflow-templates/nope', { method: 'DELETE' })).status, 404);
  });

  test('save-as-template refuses what is wrong: unknown or malformed workflow, a bad id, a name that makes no id, unknown fields', async () => {
    const id = await createWorkflow(k, { name: '!!!', steps: [{ agent_name: 'alpha' }] });
    const cases: Array<[string, unknown, number, RegExp]> = [
      ['00000000-0000-4000-8000-000000000000', {}, 404, /not found/],
      ['not-a-uuid', {}, 400, /workflow id/],
      [id, {}, 400, /the name '!!!' makes no template id: give an id/],
      [id, { id: 'Bad Id' }, 400, /id/],
      [id, { colour: 'red' }, 400, /unknown property 'colour'/],
    ];
    for (const [wf, body, status, error] of cases) {
      const res = await call<{ error: string }>(k, `/api/workflows/${wf}/save-as-template`, { method: 'POST', json: body });
      assert.equal(res.status, status, `${wf} ${JSON.stringify(body)}`);
      assert.match(res.body.error, error);
    }
  });

  test('a template added to the registry lists after the next hub sync', async () => {
    writeFileSync(path.join(registryDir, 'workflows', 'later.toml'), 'id = "later"\nname = "Later"\n[[steps]]\nname = "only"\nprompt_template = "hi"\n');
    assert.equal((await call(k, '/api/hub/sync', { method: 'POST' })).status, 200);
    await waitFor(async () => (await list()).templates.some((t) => t.id === 'later'), 5000, 'the new template listed');
  });

  test('the template routes are in the OpenAPI document', async () => {
    const doc = (await call<{ paths: Record<string, Json> }>(k, '/api/openapi.json')).body;
    for (const p of [
      '/api/workflow-templates',
      '/api/workflow-templates/{id}',
      '/api/workflow-templates/{id}/instantiate',
      '/api/workflows/{id}/save-as-template',
    ])
      assert.ok(doc.paths[p], p);
  });
});
