/**
 * The part of @xmpp/client (which ships no types) this adapter uses, typed so nothing untyped crosses into the
 * adapter: the client entity with its stream management (XEP-0198) state and middleware, and ltx elements.
 */
declare module '@xmpp/client' {
  export interface Element {
    name: string;
    attrs: Record<string, string | undefined>;
    children: Array<Element | string>;
    is(name: string, xmlns?: string): boolean;
    getChild(name: string, xmlns?: string): Element | undefined;
    getChildren(name: string, xmlns?: string): Element[];
    getChildText(name: string, xmlns?: string): string | null;
    getChildElements(): Element[];
    text(): string;
    toString(): string;
  }

  export function xml(name: string, attrs?: Record<string, string | number | undefined> | null, ...children: Array<Element | string>): Element;

  export interface JID {
    toString(): string;
    bare(): JID;
    getLocal(): string;
    getDomain(): string;
    getResource(): string;
  }

  export function jid(address: string): JID;

  export interface ClientOptions {
    service: string;
    domain: string;
    username: string;
    password: string;
    resource: string;
    timeout?: number;
  }

  /** XEP-0198 state: `inbound` is the `h` the client acknowledges and resumes with. */
  export interface StreamManagement {
    enabled: boolean;
    id: string;
    inbound: number;
    on(event: 'resumed', listener: () => void): this;
    on(event: 'fail', listener: (stanza: Element) => void): this;
    removeListener(event: string, listener: (...args: never[]) => void): this;
  }

  interface Events {
    online: (jid: JID) => void;
    element: (element: Element) => void;
    error: (error: Error & { condition?: string }) => void;
    disconnect: (info?: { clean: boolean; reason?: unknown }) => void;
    status: (status: string) => void;
  }

  export interface Client {
    status: string;
    jid: JID | null;
    on<E extends keyof Events>(event: E, listener: Events[E]): this;
    removeListener<E extends keyof Events>(event: E, listener: Events[E]): this;
    connect(service: string): Promise<void>;
    open(options: { domain: string; lang?: string }): Promise<void>;
    send(element: Element): Promise<void>;
    disconnect(): Promise<unknown>;
    stop(): Promise<unknown>;
    reconnect: { stop(): void };
    streamManagement: StreamManagement;
    middleware: { use(fn: (context: { stanza: Element }, next: () => Promise<unknown>) => unknown): void };
    iqCaller: { request(element: Element, timeout?: number): Promise<Element> };
  }

  export function client(options: ClientOptions): Client;
}
