const refuse = (id: string, prop: string | symbol): never => {
  throw new TypeError(`service '${id}' is used through its methods; '${String(prop)}' cannot be changed through a view of it`);
};

/** A running module instance as the registry sees it. */
export interface ServiceProvider {
  readonly id: string;
  /** The value of one of its services (resolved from its awilix container). */
  service(id: string): object;
}

/**
 * Which instance serves each service id. Consumers hold live views, so a
 * provider's hot reload (a publish of its new instance) never leaves them
 * holding the old object; a staged instance is not visible until published.
 */
export class ServiceRegistry {
  private readonly live = new Map<string, ServiceProvider>();
  private readonly views = new Map<string, object>();

  publish(provider: ServiceProvider, ids: readonly string[]): void {
    for (const id of this.idsOf(provider.id)) if (!ids.includes(id)) this.live.delete(id);
    for (const id of ids) this.live.set(id, provider);
  }

  /** Removes what the instance still serves (a newer instance's entries stay). */
  unpublish(provider: ServiceProvider): void {
    for (const [id, p] of this.live) if (p === provider) this.live.delete(id);
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  view<T extends object>(id: string): T {
    let view = this.views.get(id);
    if (!view) {
      const live = this.live;
      const current = () => {
        const provider = live.get(id);
        if (!provider) throw new Error(`service '${id}' is not available (module '${id.slice(0, id.indexOf('.'))}' is not running)`);
        return provider.service(id);
      };
      view = new Proxy(
        {},
        {
          get(_target, prop) {
            const value = current();
            const member = Reflect.get(value, prop, value);
            return typeof member === 'function' ? member.bind(value) : member;
          },
          has(_target, prop) {
            const provider = live.get(id);
            return !!provider && prop in provider.service(id);
          },
          // A write through a view would land on the view, not on the provider's current copy: refuse it loudly.
          set: (_target, prop) => refuse(id, prop),
          defineProperty: (_target, prop) => refuse(id, prop),
          deleteProperty: (_target, prop) => refuse(id, prop),
        },
      );
      this.views.set(id, view);
    }
    return view as T;
  }

  private idsOf(module: string): string[] {
    return [...this.live].filter(([, p]) => p.id === module).map(([id]) => id);
  }
}
