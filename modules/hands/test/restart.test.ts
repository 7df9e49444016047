import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { activate, install, json, MODULES, startEnv, stopEnv, teamHand } from './helpers.ts';

interface Instance {
  instance_id: string;
  status: string;
  agent_ids: Record<string, string>;
  schedule_ids: string[];
}

test('instances survive a restart: Active and Paused come back as they were; one whose agent vanished is an Error', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'hands-restart-'));
  try {
    let env = await startEnv({ home });
    await install(env.k, teamHand('steady'));
    await install(env.k, teamHand('sleepy'));
    await install(env.k, teamHand('fragile'));
    const steady = await json<Instance>(await activate(env.k, 'steady'));
    const sleepy = await json<Instance>(await activate(env.k, 'sleepy'));
    const fragile = await json<Instance>(await activate(env.k, 'fragile'));
    await env.k.request(`/api/hands/instances/${sleepy.instance_id}/pause`, { method: 'POST' });
    await stopEnv(env);

    // While the service is down an agent of one instance disappears: killed by a process without hands, which hears nothing of it.
    env = await startEnv({ home, modules: MODULES.filter((m) => m !== 'hands') });
    assert.equal((await env.k.request(`/api/agents/${fragile.agent_ids.worker}`, { method: 'DELETE' })).status, 200);
    await stopEnv(env);

    env = await startEnv({ home });
    const list = await json<{ instances: Instance[] }>(await env.k.request('/api/hands/active'));
    const status = Object.fromEntries(list.instances.map((i) => [i.instance_id, i.status]));
    assert.equal(status[steady.instance_id], 'Active');
    assert.equal(status[sleepy.instance_id], 'Paused');
    assert.match(status[fragile.instance_id], /^Error: agent of role 'worker' is missing after a restart/);
    const agent = await json<{ state: string }>(await env.k.request(`/api/agents/${sleepy.agent_ids.lead}`));
    assert.equal(agent.state, 'Stopped', 'a paused instance keeps its agents stopped');
    const job = await json<{ enabled: boolean }>(await env.k.request(`/api/cron/jobs/${sleepy.schedule_ids[0]}/status`));
    assert.equal(job.enabled, false);
    const resumed = await env.k.request(`/api/hands/instances/${sleepy.instance_id}/resume`, { method: 'POST' });
    assert.equal((await json<Instance>(resumed)).status, 'Active');
    await stopEnv(env);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
