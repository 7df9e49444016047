import { ownerOf } from './loader/manifest.ts';

/** A running module copy as the registry sees it: service() resolves from its awilix container. */
export interface ServiceProvider {
  readonly id: string;
  service(id: string): object;
}

/**
 * Which copy serves each service id. Consumers hold live views, so a provider's hot reload never leaves them with the
 * old object.
 */
export class ServiceRegistry {
  private readonly live = new Map<string, ServiceProvider>();

  /** The copy serves `ids` from now on, in place of every earlier copy of its module. */
  publish(provider: ServiceProvider, ids: readonly string[]): void {
    for (const [id, p] of this.live) if (p.id === provider.id) this.live.delete(id);
    for (const id of ids) this.live.set(id, provider);
  }

  /** Withdraws what the copy still serves (a newer copy's entries stay). */
  unpublish(provider: ServiceProvider): void {
    for (const [id, p] of this.live) if (p === provider) this.live.delete(id);
  }

  readonly has = (id: string): boolean => this.live.has(id);

  /** A live view of the service: calls reach the copy that serves it now, writes are refused. */
  view<T extends object>(id: string): T {
    const current = () => {
      const provider = this.live.get(id);
      if (!provider) throw new Error(`service '${id}' is not available (module '${ownerOf(id)}' is not running)`);
      return provider.service(id);
    };
    // A write would land on the view, not on the provider's current copy: refuse it loudly.
    const refuse = (_target: T, prop: string | symbol): never => {
      throw new TypeError(
        `service '${id}' is used through its methods; '${String(prop)}' cannot be changed through a view of it`,
      );
    };
    return new Proxy({} as T, {
      get(_target, prop) {
        const value = current();
        const member = Reflect.get(value, prop, value);
        return typeof member === 'function' ? member.bind(value) : member;
      },
      has: (_target, prop) => this.live.has(id) && prop in current(),
      set: refuse,
      defineProperty: refuse,
      deleteProperty: refuse,
    });
  }
}
