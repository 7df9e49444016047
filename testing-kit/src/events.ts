import type { EventCatalogue, EventChannel } from '@talon/module-sdk';
import type { EventBus } from '../../kernel/events.ts';
import { catalogueChannel } from '../../kernel/loader/module-events.ts';

/**
 * A catalogue's events on a bus, for a test that publishes and watches them without being a module: it publishes as
 * the owner, and its subscriptions are live at once until `close()`.
 */
export function eventChannel<C extends EventCatalogue>(bus: EventBus, catalogue: C): EventChannel<C> & { close(): void } {
  const scope = bus.scope(catalogue.owner);
  scope.commit();
  return { ...catalogueChannel(scope, catalogue, () => undefined), close: scope.close };
}
