import { notFound, type ModuleContext, type Routes } from '@talon/module-sdk';
import type { createEditor } from '../services/editor.ts';

const params = {
  type: 'object',
  properties: { name: { type: 'string', description: 'module name, as GET /api/modules lists it' } },
  required: ['name'],
} as const;

const switched = {
  type: 'object',
  properties: {
    module: {
      type: 'object',
      properties: { id: { type: 'string' }, state: { type: 'string' }, error: { type: 'string' } },
      required: ['id', 'state'],
    },
    changed: {
      type: 'array',
      description: 'every module whose state changed, the switched one and those that depend on it',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, previous: { type: 'string' }, state: { type: 'string' } },
        required: ['id', 'previous', 'state'],
      },
    },
  },
  required: ['module', 'changed'],
} as const;

type Lists = { disabled: string[]; enabled: string[] };

/**
 * The module switches edit `[modules] disabled` (and `enabled`, for a module its manifest leaves off) in config.toml
 * through the same path as POST /api/config/set: validated (a security module is refused with the reason), written with
 * the file's comments kept, applied at once — the module starts or stops with the modules that depend on it, all or
 * nothing — and taken back from the file when applying fails.
 */
export function moduleSwitchRoutes(app: Routes, ctx: ModuleContext, editor: ReturnType<typeof createEditor>): void {
  const lists = (): Lists => {
    const modules = (ctx.kernel.config.raw().modules ?? {}) as Partial<Lists>;
    return { disabled: [...(modules.disabled ?? [])], enabled: [...(modules.enabled ?? [])] };
  };
  const states = () => new Map(ctx.kernel.modules().map((m) => [m.id, m]));
  // One switch at a time: each reads the lists, writes them and reports what changed before the next one reads.
  let queue: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  };

  const route = (action: 'enable' | 'disable') =>
    app.put(
      `/api/modules/:name/${action}`,
      {
        schema: {
          summary:
            action === 'enable' ? 'Starts a module (and the modules waiting for it), and keeps it on' : 'Stops a module (and its dependants), and keeps it off',
          tags: ['modules'],
          params,
          response: { 200: switched },
        },
      },
      (request) =>
        oneAtATime(async () => {
          const { name } = request.params;
          const before = states();
          const info = before.get(name);
          if (!info) throw notFound(`no module '${name}' (GET /api/modules lists them)`);
          const { disabled, enabled } = lists();
          if (action === 'disable') {
            if (enabled.includes(name)) await editor.set('modules.enabled', without(enabled, name));
            if (!disabled.includes(name)) await editor.set('modules.disabled', [...disabled, name]);
          } else {
            if (disabled.includes(name)) await editor.set('modules.disabled', without(disabled, name));
            // Still off: its module.toml says enabled = false, so [modules] enabled must name it.
            if (states().get(name)?.state === 'disabled') await editor.set('modules.enabled', [...without(enabled, name), name]);
          }
          const after = states();
          request.log.info({ module: name, action }, `module switched: ${action}`);
          const changed = [...after.values()]
            .filter((m) => before.get(m.id)?.state !== m.state)
            .map((m) => ({ id: m.id, previous: before.get(m.id)?.state ?? 'unknown', state: m.state }));
          const mod = after.get(name)!;
          return { module: { id: mod.id, state: mod.state, ...(mod.error ? { error: mod.error } : {}) }, changed };
        }),
    );
  route('enable');
  route('disable');
}

const without = (list: string[], name: string): string[] => list.filter((n) => n !== name);
