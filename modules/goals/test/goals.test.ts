import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel, type TestKernel } from '@talon/testing';

type Goal = Record<string, unknown> & { id: string };

describe('goals', () => {
  let k: TestKernel;
  let agent: string;
  const call = async <T = Goal>(path: string, init: RequestInit & { json?: unknown } = {}) => {
    const res = await k.request(path, init);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const create = async (json: Record<string, unknown>) => {
    const res = await call('/api/goals', { method: 'POST', json });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    k = await startTestKernel({ only: ['goals', 'agents', 'error-envelope'] });
    const res = await k.request('/api/agents', {
      method: 'POST',
      json: { manifest_toml: 'name = "planner"\n[model]\nprovider = "default"\nmodel = "default"\n' },
    });
    assert.equal(res.status, 201, await res.clone().text());
    agent = ((await res.json()) as { agent_id: string }).agent_id;
  });
  after(() => k.stop());

  test('POST → 201 with every field (due_at stored and returned); GET returns it; the list is an envelope', async () => {
    const g = await create({ title: 'Ship v2', description: 'the big one', agent_id: agent, due_at: '2026-12-31T17:00:00Z' });
    assert.deepEqual(Object.keys(g).sort(), [
      'agent_id',
      'created_at',
      'description',
      'due_at',
      'id',
      'parent_id',
      'progress',
      'status',
      'title',
      'updated_at',
    ]);
    assert.deepEqual([g.title, g.status, g.progress, g.agent_id, g.parent_id, g.due_at], ['Ship v2', 'pending', 0, agent, null, '2026-12-31T17:00:00.000Z']);
    assert.deepEqual((await call(`/api/goals/${g.id}`)).body, g);
    const list = (await call<{ items: Goal[]; total: number }>('/api/goals')).body;
    assert.ok(list.items.some((x) => x.id === g.id));
    assert.equal(list.total, list.items.length);
  });

  test('bad creates → 400/404 naming the problem', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ description: 'no title' }, 400, /title/],
      [{ title: '   ' }, 400, /blank/],
      [{ title: 't', status: 'done' }, 400, /status|allowed/],
      [{ title: 't', progress: 101 }, 400, /progress/],
      [{ title: 't', due_at: 'next week' }, 400, /ISO 8601/],
      [{ title: 't', agent_id: 'x' }, 400, /not a UUID/],
      [{ title: 't', agent_id: '00000000-0000-4000-8000-000000000000' }, 404, /agent/],
      [{ title: 't', parent_id: '00000000-0000-4000-8000-000000000000' }, 404, /goal/],
      [{ title: 't', owner: 'me' }, 400, /unknown property 'owner'/],
    ];
    for (const [json, status, error] of cases) {
      const res = await call<{ error: string }>('/api/goals', { method: 'POST', json });
      assert.equal(res.status, status, JSON.stringify(json));
      assert.match(res.body.error, error, JSON.stringify(json));
    }
  });

  test('PUT changes title, status, description, progress and the due date (due_date too); null clears; an empty body is a 400', async () => {
    const g = await create({ title: 'Draft', due_at: '2026-12-01' });
    assert.equal(g.due_at, '2026-12-01T00:00:00.000Z');
    let res = await call(`/api/goals/${g.id}`, {
      method: 'PUT',
      json: { title: 'Final', status: 'in_progress', description: 'now', progress: 40, due_date: '2027-01-15T09:30:00+01:00' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      [res.body.title, res.body.status, res.body.description, res.body.progress, res.body.due_at],
      ['Final', 'in_progress', 'now', 40, '2027-01-15T08:30:00.000Z'],
    );
    res = await call(`/api/goals/${g.id}`, { method: 'PUT', json: { due_at: null, status: 'completed' } });
    assert.deepEqual([res.body.due_at, res.body.status, res.body.title], [null, 'completed', 'Final']);
    for (const status of ['pending', 'in_progress', 'completed', 'cancelled']) {
      assert.equal((await call(`/api/goals/${g.id}`, { method: 'PUT', json: { status } })).body.status, status);
    }
    assert.equal((await call(`/api/goals/${g.id}`, { method: 'PUT', json: {} })).status, 400);
    assert.equal((await call(`/api/goals/${g.id}`, { method: 'PUT', json: { status: 'paused' } })).status, 400);
    assert.equal((await call('/api/goals/00000000-0000-4000-8000-000000000000', { method: 'PUT', json: { title: 'x' } })).status, 404);
    assert.equal((await call('/api/goals/nope', { method: 'PUT', json: { title: 'x' } })).status, 400);
  });

  test('hierarchy: children lists direct sub-goals; a cycle is refused with 400; DELETE removes the whole subtree', async () => {
    const root = await create({ title: 'root' });
    const child = await create({ title: 'child', parent_id: root.id });
    const grandchild = await create({ title: 'grandchild', parent_id: child.id });
    const kids = (await call<{ children: Goal[]; total: number }>(`/api/goals/${root.id}/children`)).body;
    assert.deepEqual(
      kids.children.map((c) => c.id),
      [child.id],
    );
    assert.equal(kids.total, 1);
    for (const parent of [root.id, grandchild.id]) {
      const res = await call<{ error: string }>(`/api/goals/${root.id}`, { method: 'PUT', json: { parent_id: parent } });
      assert.equal(res.status, 400);
      assert.match(res.body.error, /cycle/);
    }
    const top = (await call<{ items: Goal[] }>('/api/goals?parent_id=none')).body.items;
    assert.ok(top.some((g) => g.id === root.id) && !top.some((g) => g.id === child.id));
    const res = await call(`/api/goals/${root.id}`, { method: 'DELETE' });
    assert.deepEqual(res.body, { status: 'deleted', id: root.id, removed: 3 });
    for (const g of [root, child, grandchild]) assert.equal((await call(`/api/goals/${g.id}`)).status, 404);
    assert.equal((await call(`/api/goals/${root.id}`, { method: 'DELETE' })).status, 404);
    assert.equal((await call(`/api/goals/${root.id}/children`)).status, 404);
  });

  test('templates: a useful set; applying one creates the parent goal and its sub-goals', async () => {
    const { templates } = (await call<{ templates: Array<{ id: string; name: string; goals: unknown[] }> }>('/api/goals/templates')).body;
    assert.deepEqual(
      templates.map((t) => t.id),
      ['product_launch', 'incident_response', 'team_onboarding', 'security_audit', 'data_pipeline', 'agent_deployment'],
    );
    assert.ok(templates.every((t) => t.goals.length >= 4));
    const res = await call<{ goal: Goal; children: Goal[] }>('/api/goals/templates/incident_response/apply', {
      method: 'POST',
      json: { agent_id: agent, due_at: '2026-12-24' },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.goal.title, 'Incident response');
    assert.equal(res.body.children.length, 5);
    assert.ok(res.body.children.every((c) => c.parent_id === res.body.goal.id && c.agent_id === agent && c.due_at === '2026-12-24T00:00:00.000Z'));
    assert.equal((await call(`/api/goals/${res.body.goal.id}/children`)).body.total, 5);
    assert.equal((await call('/api/goals/templates/nope/apply', { method: 'POST', json: {} })).status, 404);
  });
});
