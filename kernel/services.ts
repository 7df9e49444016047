import type { ServiceRef } from '@talon/module-sdk';

interface Entry {
  owner: number;
  value: object;
  dispose?: (value: never) => unknown;
}

/**
 * Services offered by modules, by ref id. Consumers get live views, so a
 * provider's hot reload never leaves them holding the old instance.
 */
export class ServiceRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly views = new Map<string, object>();

  provide(ref: ServiceRef<unknown>, owner: number, value: object, dispose?: (value: never) => unknown): void {
    this.entries.set(ref.id, { owner, value, dispose });
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  current(id: string): object | undefined {
    return this.entries.get(id)?.value;
  }

  /** Removes what an instance still owns (a newer instance's entries stay). */
  async release(owner: number): Promise<void> {
    for (const [id, entry] of this.entries) {
      if (entry.owner !== owner) continue;
      this.entries.delete(id);
      await entry.dispose?.(entry.value as never);
    }
  }

  view<T extends object>(id: string): T {
    let view = this.views.get(id);
    if (!view) {
      const registry = this;
      view = new Proxy(
        {},
        {
          get(_target, prop) {
            const value = registry.current(id);
            if (!value) throw new Error(`service '${id}' is not available (its module is not loaded)`);
            const member = Reflect.get(value, prop, value);
            return typeof member === 'function' ? member.bind(value) : member;
          },
          has(_target, prop) {
            const value = registry.current(id);
            return !!value && prop in value;
          },
        },
      );
      this.views.set(id, view);
    }
    return view as T;
  }
}
