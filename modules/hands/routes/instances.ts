/** Hand instances: activate, list, pause, resume, deactivate, stats, browser. */
import { requireUuid, type Routes } from '@talon/module-sdk';
import type { KvMemory } from '@talon/memory';
import type { HandCatalog } from '../services/catalog.ts';
import type { InstanceStore } from '../services/instances.ts';
import type { HandLifecycle } from '../services/lifecycle.ts';
import { instanceView } from '../services/views.ts';
import { activateBody, handParams, instanceParams } from './schemas.ts';

export interface InstanceRouteDeps {
  catalog: HandCatalog;
  instances: InstanceStore;
  lifecycle: HandLifecycle;
  kv: () => KvMemory | undefined;
}

const tags = ['hands'];

export function instanceRoutes(app: Routes, deps: InstanceRouteDeps): void {
  const { catalog, instances, lifecycle } = deps;
  const view = (id: string) => {
    const i = lifecycle.require(id);
    return instanceView(i, catalog.get(i.hand_id));
  };

  app.get('/api/hands/active', { schema: { summary: 'Hand instances (Active, Paused and Error)', tags }, config: { quiet: true } }, async () => {
    const list = instances.list().map((i) => instanceView(i, catalog.get(i.hand_id)));
    return { instances: list, total: list.length };
  });

  app.post(
    '/api/hands/:hand_id/activate',
    { schema: { summary: "Start a new instance: spawn the hand's agents, register its schedules and triggers", tags, params: handParams, body: activateBody } },
    async (request, reply) => {
      const instance = await lifecycle.activate(request.params.hand_id, request.body);
      request.log.info({ hand: instance.hand_id, instance: instance.id }, 'hand activated');
      return reply.code(201).send(instanceView(instance, catalog.get(instance.hand_id)));
    },
  );

  app.post(
    '/api/hands/instances/:id/pause',
    { schema: { summary: "Pause an instance: its agents' turns and background work stop", tags, params: instanceParams } },
    async (request) => {
      const id = requireUuid(request.params.id, 'instance id');
      await lifecycle.pause(id);
      return view(id);
    },
  );

  app.post('/api/hands/instances/:id/resume', { schema: { summary: 'Resume a paused instance', tags, params: instanceParams } }, async (request) => {
    const id = requireUuid(request.params.id, 'instance id');
    await lifecycle.resume(id);
    return view(id);
  });

  app.delete(
    '/api/hands/instances/:id',
    { schema: { summary: 'Deactivate an instance and remove everything it created', tags, params: instanceParams } },
    async (request) => {
      const { instance, problems } = await lifecycle.deactivate(requireUuid(request.params.id, 'instance id'));
      request.log.info({ hand: instance.hand_id, instance: instance.id }, 'hand deactivated');
      return {
        status: 'deactivated',
        instance_id: instance.id,
        hand_id: instance.hand_id,
        state: 'Inactive',
        removed: { agents: Object.keys(instance.agents).length, schedules: instance.jobs.length, triggers: instance.triggers.length },
        problems,
      };
    },
  );

  app.get(
    '/api/hands/instances/:id/stats',
    { schema: { summary: 'Uptime, events processed, errors and the hand dashboard metrics', tags, params: instanceParams } },
    async (request) => {
      const i = lifecycle.require(requireUuid(request.params.id, 'instance id'));
      const v = instanceView(i, catalog.get(i.hand_id));
      const kv = deps.kv();
      const metrics = Object.fromEntries(
        await Promise.all(
          (catalog.get(i.hand_id)?.metrics ?? []).map(async (m) => [
            m.label,
            { value: v.agent_id ? ((await kv?.get(v.agent_id, m.memory_key))?.value ?? null) : null, format: m.format, memory_key: m.memory_key },
          ]),
        ),
      );
      return {
        instance_id: i.id,
        hand_id: i.hand_id,
        status: i.status,
        agent_id: v.agent_id,
        uptime_secs: Math.max(0, Math.floor((Date.now() - Date.parse(i.activated_at)) / 1000)),
        // As stored: the events every process counted, not only this one's.
        ...((await instances.counters(i.id)) ?? { events_processed: i.events_processed, errors: i.errors, last_error: i.last_error }),
        metrics,
      };
    },
  );

  app.get('/api/hands/instances/:id/browser', { schema: { summary: "The instance's browser session", tags, params: instanceParams } }, async (request) => {
    const i = lifecycle.require(requireUuid(request.params.id, 'instance id'));
    const usesBrowser = (catalog.get(i.hand_id)?.tools ?? []).some((t) => t.startsWith('browser_'));
    // No module of this service drives a browser: a hand that asks for browser tools has none to use.
    return { active: false, instance_id: i.id, uses_browser: usesBrowser, reason: usesBrowser ? 'no browser module is running' : 'the hand uses no browser' };
  });
}
