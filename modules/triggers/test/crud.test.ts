import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, createTrigger, spawn, startEnv, stopEnv, type Env } from './helpers.ts';

type Json = Record<string, unknown>;

describe('triggers: create, list, get, PATCH, DELETE', () => {
  let env: Env;
  let owner: string;
  let other: string;
  before(async () => {
    env = await startEnv();
    owner = await spawn(env.k, 'owner');
    other = await spawn(env.k, 'other');
  });
  after(() => stopEnv(env));

  test('POST → 201 {trigger_id, agent_id}; GET has every field with its default; the list is a bare array', async () => {
    const res = await call<{ trigger_id: string; agent_id: string }>(env.k, '/api/triggers', {
      method: 'POST',
      json: { agent_id: owner, pattern: { lifecycle: {} }, prompt_template: 'Saw: {{event}}' },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { trigger_id: res.body.trigger_id, agent_id: owner });
    const t = (await call<Json>(env.k, `/api/triggers/${res.body.trigger_id}`)).body;
    assert.deepEqual(
      { ...t, created_at: undefined, updated_at: undefined },
      {
        id: res.body.trigger_id,
        agent_id: owner,
        pattern: { lifecycle: {} },
        prompt_template: 'Saw: {{event}}',
        enabled: true,
        fire_count: 0,
        max_fires: 0,
        created_at: undefined,
        cooldown_secs: null,
        session_mode: null,
        target_agent_id: null,
        workflow_id: null,
        last_fired_at: null,
        updated_at: undefined,
      },
    );
    const list = (await call<Json[]>(env.k, '/api/triggers')).body;
    assert.ok(Array.isArray(list) && list.some((x) => x.id === t.id));
  });

  test('every pattern shape of the spec (and bare strings, {x: null}) is accepted and stored as an object', async () => {
    const shapes: Array<[unknown, Json]> = [
      [{ lifecycle: {} }, { lifecycle: {} }],
      ['lifecycle', { lifecycle: {} }],
      [{ lifecycle: null }, { lifecycle: {} }],
      [{ agent_spawned: { name_pattern: 'worker-?' } }, { agent_spawned: { name_pattern: 'worker-?' } }],
      [{ agent_spawned: {} }, { agent_spawned: { name_pattern: '*' } }],
      [{ agent_terminated: {} }, { agent_terminated: {} }],
      [{ all: {} }, { all: {} }],
      [{ task_posted: { assignee_match: 'self' } }, { task_posted: { assignee_match: 'self' } }],
      [{ task_posted: {} }, { task_posted: { assignee_match: 'any' } }],
      [{ memory_key_pattern: { key_pattern: 'pref.*' } }, { memory_update: { key_pattern: 'pref.*' } }],
      [{ custom: { event_type: 'deploy.*' } }, { custom: { event_type: 'deploy.*' } }],
      [{ content_match: { substring: 'error' } }, { content_match: { substring: 'error' } }],
      [{ event: { type: 'workflow.*' } }, { event: { type: 'workflow.*' } }],
      // Text that is the pattern object as JSON (a form field) is read as that object.
      ['{"task_posted": {"assignee_match": "self"}}', { task_posted: { assignee_match: 'self' } }],
    ];
    for (const [pattern, stored] of shapes) {
      const id = await createTrigger(env.k, { agent_id: owner, pattern, prompt_template: 'x' });
      assert.deepEqual((await call<Json>(env.k, `/api/triggers/${id}`)).body.pattern, stored, JSON.stringify(pattern));
    }
  });

  test('bad creates: required fields, ids, unknown agents and patterns, bad values', async () => {
    const ok = { agent_id: owner, pattern: 'all', prompt_template: 'x' };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ pattern: 'all', prompt_template: 'x' }, 400, /agent_id/],
      [{ agent_id: owner, prompt_template: 'x' }, 400, /pattern/],
      [{ agent_id: owner, pattern: 'all' }, 400, /prompt_template/],
      [{ ...ok, agent_id: 'nope' }, 400, /not a UUID/],
      [{ ...ok, agent_id: '00000000-0000-4000-8000-000000000000' }, 404, /not found/],
      [{ ...ok, pattern: { sometimes: {} } }, 400, /unknown pattern 'sometimes'/],
      [
        { ...ok, pattern: '{"lifecycle": {}' },
        400,
        /^pattern is not valid JSON \(.*at position 16\): send an object with one key, such as \{"lifecycle": \{\}\}.* or a pattern name \(one of all, lifecycle/,
      ],
      [{ ...ok, pattern: '{"task_posted": {"assignee_match": self}}' }, 400, /^pattern is not valid JSON \(.*self\}\}.*\): send an object/],
      [{ ...ok, pattern: { lifecycle: {}, all: {} } }, 400, /one key/],
      [{ ...ok, pattern: { agent_spawned: { name: 'x' } } }, 400, /no field 'name'/],
      [{ ...ok, pattern: { content_match: {} } }, 400, /needs 'substring'/],
      [{ ...ok, session_mode: 'sometimes' }, 400, /session_mode|allowed/],
      [{ ...ok, max_fires: -1 }, 400, /max_fires/],
      [{ ...ok, target_agent_id: '00000000-0000-4000-8000-000000000000' }, 404, /target_agent_id/],
      [{ ...ok, target_agent_id: 'x' }, 400, /not a UUID/],
      [{ ...ok, extra: 1 }, 400, /unknown property 'extra'/],
    ];
    for (const [json, status, error] of cases) {
      const res = await call<{ error: string }>(env.k, '/api/triggers', { method: 'POST', json });
      assert.equal(res.status, status, JSON.stringify(json));
      assert.match(res.body.error, error, JSON.stringify(json));
    }
    const empty = await call(env.k, '/api/triggers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    assert.equal(empty.status, 400);
  });

  test('GET ?agent_id filters; a malformed filter → 400; unknown id → 404; a malformed id → 400', async () => {
    const mine = await createTrigger(env.k, { agent_id: other, pattern: 'all', prompt_template: 'x' });
    const list = (await call<Json[]>(env.k, `/api/triggers?agent_id=${other}`)).body;
    assert.deepEqual(
      list.map((t) => t.id),
      [mine],
    );
    assert.equal((await call(env.k, '/api/triggers?agent_id=nope')).status, 400);
    assert.equal((await call(env.k, '/api/triggers/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await call(env.k, '/api/triggers/nope')).status, 400);
  });

  test('PATCH: omitted fields stay, null clears cooldown_secs, session_mode and target_agent_id; answers the full trigger', async () => {
    const id = await createTrigger(env.k, {
      agent_id: owner,
      pattern: 'all',
      prompt_template: 'first',
      cooldown_secs: 30,
      session_mode: 'new',
      target_agent_id: other,
      max_fires: 3,
    });
    let res = await call<Json>(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { prompt_template: 'second' } });
    assert.equal(res.status, 200);
    assert.deepEqual(
      [res.body.prompt_template, res.body.cooldown_secs, res.body.session_mode, res.body.target_agent_id, res.body.max_fires],
      ['second', 30, 'new', other, 3],
    );
    res = await call<Json>(env.k, `/api/triggers/${id}`, {
      method: 'PATCH',
      json: { cooldown_secs: null, session_mode: null, target_agent_id: null, enabled: false },
    });
    assert.deepEqual(
      [res.body.cooldown_secs, res.body.session_mode, res.body.target_agent_id, res.body.enabled, res.body.prompt_template],
      [null, null, null, false, 'second'],
    );
    assert.equal((await call(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { prompt_template: null } })).status, 400);
    assert.equal((await call(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { enabled: null } })).status, 400);
    assert.equal((await call(env.k, `/api/triggers/${id}`, { method: 'PATCH', json: { pattern: 'never' } })).status, 400);
    assert.equal((await call(env.k, '/api/triggers/00000000-0000-4000-8000-000000000000', { method: 'PATCH', json: { enabled: true } })).status, 404);
    assert.equal((await call(env.k, '/api/triggers/nope', { method: 'PATCH', json: { enabled: true } })).status, 400);
  });

  test('DELETE → {status: removed, trigger_id}; then 404', async () => {
    const id = await createTrigger(env.k, { agent_id: owner, pattern: 'all', prompt_template: 'x' });
    assert.deepEqual(await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' }), { status: 200, body: { status: 'removed', trigger_id: id } });
    assert.equal((await call(env.k, `/api/triggers/${id}`)).status, 404);
    assert.equal((await call(env.k, `/api/triggers/${id}`, { method: 'DELETE' })).status, 404);
  });
});
