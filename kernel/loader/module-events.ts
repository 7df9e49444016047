import path from 'node:path';
import type { EventAccess, EventCatalogue, EventChannel, SubscribeOptions, TalonEvent } from '@talon/module-sdk';
import type { BusScope } from '../events.ts';
import { declares, howToDeclare, type Manifest } from './manifest.ts';

/** The event name no module owns: anyone publishes and subscribes to it. */
const CUSTOM = 'custom';

/**
 * A module copy's `ctx.events`: the bus, with the connection rules. Only the owner of a catalogue (listed in its
 * defineModule) publishes its events; subscribing to another module's events needs that module declared in
 * module.toml, and '*' needs `all_events = true`. Who owns which events is data from the modules' catalogues.
 */
export function moduleEvents(scope: BusScope, manifest: Manifest, owned: readonly EventCatalogue[]): EventAccess {
  const id = manifest.name;
  const toml = path.join(manifest.dir, 'module.toml');

  const forCatalogue = (catalogue: EventCatalogue): EventChannel<EventCatalogue> => {
    const { owner } = catalogue;
    if (owner !== id && !declares(manifest, `${owner}.events`))
      throw new Error(
        `module '${id}' subscribes to events of module '${owner}' without declaring it: ` +
          howToDeclare(manifest, owner),
      );
    const view = catalogueChannel(scope, catalogue, (type) => {
      if (owner !== id)
        throw new Error(`module '${id}' publishes '${type}', an event of module '${owner}': only its owner may`);
      if (!owned.some((c) => c.owner === id && c.types.includes(type)))
        throw new Error(
          `module '${id}' publishes '${type}', but lists no catalogue with it in defineModule({ events })`,
        );
    });
    // A catalogue is the module's own word for whose events it reads: one naming another module's events under its
    // own owner (declared in its stead) hears nothing of them, since only an event's owner publishes it.
    const subscribe: EventChannel<EventCatalogue>['subscribe'] = (types, handler, options) =>
      view.subscribe(types, (event) => (event.source === owner ? handler(event) : undefined), options);
    return { publish: view.publish, subscribe };
  };

  const subscribe = (types: string, handler: (event: never) => unknown, options?: SubscribeOptions) => {
    if (types === '*' && !manifest.all_events)
      throw new Error(
        `module '${id}' subscribes to every module's events ('*') without declaring it: ` +
          `add all_events = true to ${toml}`,
      );
    if (types !== '*' && types !== CUSTOM)
      throw new Error(
        `module '${id}' subscribes to '${types}' by name: subscribe through its owner's catalogue, ctx.events.of(...)`,
      );
    return scope.subscribe(types === '*' ? '*' : [CUSTOM], handler as (event: TalonEvent) => unknown, options);
  };

  return {
    of: forCatalogue as EventAccess['of'],
    publish: (type, data) => {
      if (type !== CUSTOM)
        throw new Error(
          `module '${id}' publishes '${type}' by name: publish through its catalogue, ctx.events.of(...)`,
        );
      return scope.publish(CUSTOM, data) as never;
    },
    subscribe: subscribe as EventAccess['subscribe'],
  };
}

/**
 * One catalogue's events over a bus scope: names are checked against the catalogue and 'x.*' stands for its events
 * named 'x.…'. `mayPublish` throws for an event the scope's holder may not publish.
 */
export function catalogueChannel<C extends EventCatalogue>(
  scope: BusScope,
  catalogue: C,
  mayPublish: (type: string) => void,
): EventChannel<C> {
  const { owner, types } = catalogue;
  const known = (type: string) => {
    if (!types.includes(type))
      throw new Error(`'${type}' is not an event of module '${owner}' (its events: ${types.join(', ')})`);
    return type;
  };
  const expand = (type: string): string[] => {
    if (!type.endsWith('.*')) return [known(type)];
    const matching = types.filter((t) => t.startsWith(type.slice(0, -1)));
    if (!matching.length) throw new Error(`no event of module '${owner}' matches '${type}'`);
    return matching;
  };
  const view: EventChannel<EventCatalogue> = {
    publish: (type, data) => {
      mayPublish(type);
      return scope.publish(known(type), data) as never;
    },
    subscribe: (types, handler, options) =>
      scope.subscribe(
        (typeof types === 'string' ? [types] : types).flatMap(expand),
        handler as (event: TalonEvent) => unknown,
        options,
      ),
  };
  // The checks above are by name at run time; the catalogue's type says which names and payloads compile.
  return view as unknown as EventChannel<C>;
}
