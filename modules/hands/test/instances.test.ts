import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { eventChannel, waitFor } from '@talon/testing';
import { taintEvents } from '@talon/taint';
import { activate, install, json, startEnv, stopEnv, teamHand, type Env } from './helpers.ts';

let env: Env;
before(async () => {
  env = await startEnv();
});
after(() => stopEnv(env));

interface Instance {
  instance_id: string;
  hand_id: string;
  status: string;
  agent_id: string;
  agent_ids: Record<string, string>;
  schedule_ids: string[];
  trigger_ids: string[];
  coordinator_role: string;
}
interface Agent {
  id: string;
  name: string;
  tags: string[];
  state: string;
}

const agent = async (id: string) => json<Agent>(await env.k.request(`/api/agents/${id}`));

test('activate spawns each role named and tagged, registers the schedules and triggers; GET /api/hands/active lists it', async () => {
  assert.equal((await install(env.k, teamHand('alpha'))).status, 201);
  const res = await activate(env.k, 'alpha');
  assert.equal(res.status, 201);
  const inst = await json<Instance>(res);
  assert.equal(inst.status, 'Active');
  assert.deepEqual(Object.keys(inst.agent_ids).sort(), ['checker', 'lead', 'worker']);
  assert.equal(inst.coordinator_role, 'lead');
  assert.equal(inst.agent_id, inst.agent_ids.lead);
  const worker = await agent(inst.agent_ids.worker);
  assert.equal(worker.name, 'alpha:worker');
  assert.ok(worker.tags.includes('hand:alpha') && worker.tags.includes(`hand_instance:${inst.instance_id}`) && worker.tags.includes('hand_role:worker'));

  const jobs = await json<Array<{ id: string; agent_id: string; enabled: boolean; schedule: string }>>(await env.k.request('/api/cron/jobs'));
  const job = (Array.isArray(jobs) ? jobs : (jobs as unknown as { jobs: typeof jobs }).jobs).find((j) => j.id === inst.schedule_ids[0]);
  assert.ok(job, 'the schedule is a scheduler job');
  assert.equal(job.agent_id, inst.agent_ids.worker);
  const trigger = await json<{ agent_id: string; enabled: boolean }>(await env.k.request(`/api/triggers/${inst.trigger_ids[0]}`));
  assert.equal(trigger.agent_id, inst.agent_ids.lead);

  const active = await json<{ instances: Instance[]; total: number }>(await env.k.request('/api/hands/active'));
  assert.ok(active.instances.some((i) => i.instance_id === inst.instance_id && i.status === 'Active'));
  const second = await activate(env.k, 'alpha');
  assert.equal(second.status, 409);
  assert.match((await json<{ error: string }>(second)).error, /already has an instance/);
});

test('pause stops the agents and their background work; resume brings it back; only the right states move', async () => {
  await install(env.k, teamHand('beta'));
  const inst = await json<Instance>(await activate(env.k, 'beta'));
  const pause = await env.k.request(`/api/hands/instances/${inst.instance_id}/pause`, { method: 'POST' });
  assert.equal(pause.status, 200);
  assert.equal((await json<Instance>(pause)).status, 'Paused');
  for (const id of Object.values(inst.agent_ids)) assert.equal((await agent(id)).state, 'Stopped');
  const job = await json<{ enabled: boolean }>(await env.k.request(`/api/cron/jobs/${inst.schedule_ids[0]}/status`));
  assert.equal(job.enabled, false);
  assert.equal((await json<{ enabled: boolean }>(await env.k.request(`/api/triggers/${inst.trigger_ids[0]}`))).enabled, false);
  const turn = await env.k.request(`/api/agents/${inst.agent_id}/message`, { method: 'POST', json: { message: 'hi' } });
  assert.equal(turn.status, 409, 'a paused hand agent takes no turn');
  assert.equal((await env.k.request(`/api/hands/instances/${inst.instance_id}/pause`, { method: 'POST' })).status, 409);

  const resume = await env.k.request(`/api/hands/instances/${inst.instance_id}/resume`, { method: 'POST' });
  assert.equal((await json<Instance>(resume)).status, 'Active');
  for (const id of Object.values(inst.agent_ids)) assert.equal((await agent(id)).state, 'Running');
  assert.equal((await json<{ enabled: boolean }>(await env.k.request(`/api/cron/jobs/${inst.schedule_ids[0]}/status`))).enabled, true);
  assert.equal((await json<{ enabled: boolean }>(await env.k.request(`/api/triggers/${inst.trigger_ids[0]}`))).enabled, true);
  assert.equal((await env.k.request(`/api/hands/instances/${inst.instance_id}/resume`, { method: 'POST' })).status, 409);
});

test('DELETE /api/hands/instances/{id} removes the agents, schedules and triggers it created', async () => {
  await install(env.k, teamHand('gamma'));
  const inst = await json<Instance>(await activate(env.k, 'gamma'));
  const res = await env.k.request(`/api/hands/instances/${inst.instance_id}`, { method: 'DELETE' });
  assert.equal(res.status, 200);
  const body = await json<{ status: string; state: string; removed: Record<string, number> }>(res);
  assert.equal(body.status, 'deactivated');
  assert.equal(body.state, 'Inactive');
  assert.deepEqual(body.removed, { agents: 3, schedules: 1, triggers: 1 });
  for (const id of Object.values(inst.agent_ids)) assert.equal((await env.k.request(`/api/agents/${id}`)).status, 404);
  assert.equal((await env.k.request(`/api/cron/jobs/${inst.schedule_ids[0]}/status`)).status, 404);
  assert.equal((await env.k.request(`/api/triggers/${inst.trigger_ids[0]}`)).status, 404);
  assert.equal((await env.k.request(`/api/hands/instances/${inst.instance_id}`, { method: 'DELETE' })).status, 404);
  // A new activation is accepted once the old instance is gone.
  const again = await activate(env.k, 'gamma');
  assert.equal(again.status, 201);
  await env.k.request(`/api/hands/instances/${(await json<Instance>(again)).instance_id}`, { method: 'DELETE' });
});

test('a hand whose agents fail to spawn ends in Error with nothing left behind', async () => {
  await install(env.k, teamHand('delta'));
  // An agent already holds the name of the third role: its spawn fails after two others were made.
  const clash = await env.k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "delta:checker"\n' } });
  assert.equal(clash.status, 201);
  const before = await json<unknown[]>(await env.k.request('/api/agents'));
  const res = await activate(env.k, 'delta');
  assert.equal(res.status, 409);
  const body = await json<{ error: string; instance_id: string; status: string }>(res);
  assert.match(body.error, /could not be activated: an agent named 'delta:checker' already exists/);
  assert.match(body.status, /^Error: /);
  const after = await json<unknown[]>(await env.k.request('/api/agents'));
  assert.equal(after.length, before.length, 'the roles spawned before the failure are gone');
  const listed = (await json<{ instances: Instance[] }>(await env.k.request('/api/hands/active'))).instances.find((i) => i.instance_id === body.instance_id);
  assert.ok(listed);
  assert.match(listed.status, /^Error: an agent named/);
  assert.deepEqual(listed.agent_ids, {});
  assert.deepEqual(listed.schedule_ids, []);
  // An Error instance does not block another activation once the clash is gone.
  const clashId = (await json<{ agent_id: string }>(clash)).agent_id;
  await env.k.request(`/api/agents/${clashId}`, { method: 'DELETE' });
  const ok = await activate(env.k, 'delta');
  assert.equal(ok.status, 201);
});

test('a failure after the agents and the schedule were made (a trigger refused) removes them all; the instance is an Error', async () => {
  await install(env.k, teamHand('iota', '\n[[triggers]]\npattern = "no_such_event"\nprompt_template = "never"\n'));
  const agentsBefore = await json<unknown[]>(await env.k.request('/api/agents'));
  const triggerCount = async () => {
    const body = await json<unknown>(await env.k.request('/api/triggers'));
    return (Array.isArray(body) ? body : (body as { triggers: unknown[] }).triggers).length;
  };
  const triggersBefore = await triggerCount();
  const jobs = async () => {
    const body = await json<unknown>(await env.k.request('/api/cron/jobs'));
    return (Array.isArray(body) ? body : (body as { jobs: unknown[] }).jobs) as Array<{ name: string }>;
  };
  const res = await activate(env.k, 'iota');
  assert.equal(res.status, 400, 'the trigger module refuses the pattern');
  const body = await json<{ error: string; instance_id: string; status: string }>(res);
  assert.match(body.error, /hand 'iota' could not be activated: .*no_such_event/);
  assert.match(body.status, /^Error: /);
  assert.equal((await json<unknown[]>(await env.k.request('/api/agents'))).length, agentsBefore.length, 'its three agents are gone');
  assert.deepEqual(
    (await jobs()).filter((j) => j.name.startsWith('iota:')),
    [],
    'its schedule is gone',
  );
  assert.equal(await triggerCount(), triggersBefore, 'its valid trigger, made before the refused one, is gone');
  const listed = (await json<{ instances: Instance[] }>(await env.k.request('/api/hands/active'))).instances.find((i) => i.instance_id === body.instance_id);
  assert.deepEqual([listed?.agent_ids, listed?.schedule_ids, listed?.trigger_ids], [{}, [], []]);
});

test('an agent killed outside the hand puts its instance in Error', async () => {
  await install(env.k, teamHand('epsilon'));
  const inst = await json<Instance>(await activate(env.k, 'epsilon'));
  await env.k.request(`/api/agents/${inst.agent_ids.checker}`, { method: 'DELETE' });
  await waitFor(async () => {
    const list = await json<{ instances: Instance[] }>(await env.k.request('/api/hands/active'));
    return list.instances.find((i) => i.instance_id === inst.instance_id)?.status.startsWith('Error: agent ') ?? false;
  }, 3000);
  assert.equal((await env.k.request(`/api/hands/instances/${inst.instance_id}/pause`, { method: 'POST' })).status, 409);
  const del = await json<{ removed: Record<string, number> }>(await env.k.request(`/api/hands/instances/${inst.instance_id}`, { method: 'DELETE' }));
  assert.equal(del.removed.agents, 3);
  for (const id of Object.values(inst.agent_ids)) assert.equal((await env.k.request(`/api/agents/${id}`)).status, 404);
});

test('unmet mandatory requirements refuse the activation (409 with the list); force activates degraded', async () => {
  const toml = teamHand(
    'zeta',
    '\n[[requires]]\nkey = "ZETA_TOKEN"\nlabel = "Zeta token"\nrequirement_type = "api_key"\ncheck_value = "HANDS_TEST_ZETA_TOKEN"\n',
  );
  await install(env.k, toml);
  const res = await activate(env.k, 'zeta');
  assert.equal(res.status, 409);
  const body = await json<{ error: string; requirements: Array<{ key: string; satisfied: boolean }> }>(res);
  assert.match(body.error, /Zeta token/);
  assert.equal(body.requirements.find((r) => r.key === 'ZETA_TOKEN')?.satisfied, false);
  const forced = await activate(env.k, 'zeta', { force: true });
  assert.equal(forced.status, 201);
  assert.equal((await json<{ degraded: boolean }>(forced)).degraded, true);
});

test('settings join the prompt of every model call; stats count events and read the dashboard metrics', async () => {
  await install(env.k, teamHand('eta'));
  const inst = await json<Instance>(await activate(env.k, 'eta', { config: { tone: 'formal', auth_token: 'tok-secret-123' } }));
  env.fake.enqueue({ text: 'done' });
  const turn = await env.k.request(`/api/agents/${inst.agent_id}/message`, { method: 'POST', json: { message: 'report' } });
  assert.equal(turn.status, 200);
  const sent = JSON.stringify(env.fake.requests.at(-1)?.body);
  assert.match(sent, /You lead the eta team/);
  assert.match(sent, /Tone \(tone\): formal/);
  assert.match(sent, /Token \(auth_token\): \(set; not shown\)/);
  assert.doesNotMatch(sent, /tok-secret-123/);
  assert.match(sent, /eta:worker \(worker\): Works/);

  await env.k.request('/api/hands/eta/settings', { method: 'PUT', json: { tone: 'plain' } });
  env.fake.enqueue({ text: 'done again' });
  await env.k.request(`/api/agents/${inst.agent_id}/message`, { method: 'POST', json: { message: 'again' } });
  assert.match(JSON.stringify(env.fake.requests.at(-1)?.body), /Tone \(tone\): plain/);

  await env.k.request(`/api/memory/agents/${inst.agent_id}/kv/done_count`, { method: 'PUT', json: { value: 7 } });
  let stats: { uptime_secs: number; events_processed: number; errors: number; metrics: Record<string, { value: unknown; format: string }> } | undefined;
  await waitFor(async () => {
    stats = await json(await env.k.request(`/api/hands/instances/${inst.instance_id}/stats`));
    return stats!.events_processed >= 4;
  }, 3000);
  assert.equal(stats!.errors, 0);
  assert.ok(stats!.uptime_secs >= 0);
  assert.deepEqual(stats!.metrics.Done, { value: 7, format: 'number', memory_key: 'done_count' });
});

test('stats count an event naming an instance agent from a module hands hears only through consumes (taint.events)', async () => {
  await install(env.k, teamHand('kappa'));
  const res = await activate(env.k, 'kappa');
  assert.equal(res.status, 201, await res.clone().text());
  const inst = await json<Instance>(res);
  const stats = async () => json<{ events_processed: number; errors: number }>(await env.k.request(`/api/hands/instances/${inst.instance_id}/stats`));
  const before = (await stats()).events_processed;
  // taint is not running here: its catalogue is heard through consumes = ["taint.events"], published as its owner would.
  const taint = eventChannel(env.k.kernel.events, taintEvents);
  taint.publish('taint.violation', { agentId: inst.agent_ids.worker, tool: 'web_fetch', sink: 'net', rules: ['secret'], action: 'block', labels: ['secret'] });
  taint.close();
  await waitFor(async () => (await stats()).events_processed === before + 1, 3000, 'the taint event of the worker to count');
});

test('browser answers {active: false}; instance ids: 400 malformed, 404 unknown', async () => {
  await install(env.k, teamHand('theta'));
  const inst = await json<Instance>(await activate(env.k, 'theta'));
  const browser = await json<{ active: boolean; uses_browser: boolean }>(await env.k.request(`/api/hands/instances/${inst.instance_id}/browser`));
  assert.equal(browser.active, false);
  assert.equal(browser.uses_browser, false);
  const unknown = '00000000-0000-4000-8000-000000000000';
  for (const [method, suffix] of [
    ['POST', '/pause'],
    ['POST', '/resume'],
    ['DELETE', ''],
    ['GET', '/stats'],
    ['GET', '/browser'],
  ]) {
    const bad = await env.k.request(`/api/hands/instances/not-a-uuid${suffix}`, { method });
    assert.equal(bad.status, 400, `${method} ${suffix}`);
    assert.match((await json<{ error: string }>(bad)).error, /not a UUID/);
    const missing = await env.k.request(`/api/hands/instances/${unknown}${suffix}`, { method });
    assert.equal(missing.status, 404, `${method} ${suffix}`);
  }
  assert.equal((await activate(env.k, 'no-such-hand')).status, 404);
  const badBody = await env.k.request('/api/hands/theta/activate', { method: 'POST', json: { config: { tone: 'shouty' } } });
  assert.equal(badBody.status, 400);
  assert.equal((await env.k.request('/api/hands/theta/activate', { method: 'POST', json: { nope: 1 } })).status, 400);
});
