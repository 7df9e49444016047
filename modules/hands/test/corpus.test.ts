/**
 * The reference registry's hands (librefang/librefang-registry hands/*), when a local copy is given in
 * TALON_HAND_CORPUS (the registry's root folder): every HAND.toml installs through the registry, and each hand whose
 * requirements are met here activates, pauses, resumes and deactivates. Without the variable the test is skipped
 * and says why (the corpus is fetched outside the repository).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { json, startEnv, stopEnv } from './helpers.ts';

const corpus = process.env.TALON_HAND_CORPUS;
const reason = corpus ? undefined : 'TALON_HAND_CORPUS is not set (a local copy of librefang/librefang-registry); the corpus run is skipped';
if (reason) console.log(`# skipped: ${reason}`);

test('the reference registry hands install, and those whose requirements are met run through their lifecycle', { skip: reason }, async () => {
  const ids = readdirSync(path.join(corpus!, 'hands')).filter((d) => existsSync(path.join(corpus!, 'hands', d, 'HAND.toml')));
  const env = await startEnv({ extra: `[hub]\nregistry_url = "${corpus}"\n` });
  const figures = { hands: ids.length, installed: 0, met: 0, cycled: 0, refused: [] as string[], unmet: [] as string[] };
  try {
    for (const id of ids) {
      const res = await env.k.request('/api/hands/install', { method: 'POST', json: { slug: id } });
      if (res.status !== 201) {
        figures.refused.push(`${id}: ${res.status} ${(await json<{ error: string }>(res)).error}`);
        continue;
      }
      figures.installed++;
      const deps = await json<{ requirements_met: boolean; requirements: Array<{ check_value: string; satisfied: boolean; optional: boolean }> }>(
        await env.k.request(`/api/hands/${id}/check-deps`, { method: 'POST' }),
      );
      if (!deps.requirements_met) {
        const missing = deps.requirements.filter((r) => !r.satisfied && !r.optional).map((r) => r.check_value);
        figures.unmet.push(`${id} (${missing.join(', ')})`);
        continue;
      }
      figures.met++;
      const act = await env.k.request(`/api/hands/${id}/activate`, { method: 'POST' });
      assert.equal(act.status, 201, `${id}: ${await act.clone().text()}`);
      const { instance_id } = await json<{ instance_id: string }>(act);
      for (const step of ['pause', 'resume'])
        assert.equal((await env.k.request(`/api/hands/instances/${instance_id}/${step}`, { method: 'POST' })).status, 200, `${id} ${step}`);
      assert.equal((await env.k.request(`/api/hands/instances/${instance_id}`, { method: 'DELETE' })).status, 200, `${id} deactivate`);
      figures.cycled++;
    }
    console.log(`# corpus: ${JSON.stringify(figures)}`);
    assert.equal(figures.installed, ids.length, figures.refused.join('\n'));
    assert.equal(figures.cycled, figures.met);
  } finally {
    await stopEnv(env);
  }
});
