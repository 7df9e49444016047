/**
 * Service references: the only coupling between modules. A ref is a string id
 * with a phantom type, so two bundled copies of the same ref agree.
 */
export interface ServiceRef<T> {
  readonly id: string;
  /** Phantom field: carries the service type, never set at run time. */
  readonly __type?: T;
}

export function serviceRef<T>(id: `${string}.${string}`): ServiceRef<T> {
  return Object.freeze({ id });
}

export function isServiceRef(value: unknown): value is ServiceRef<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as ServiceRef<unknown>).id === 'string' && Object.keys(value).length === 1;
}
