/**
 * The part of irc-framework (which ships no types) this adapter uses, typed so nothing untyped crosses into the
 * adapter: the client, its connection's write with a flush callback, and the events it listens to.
 */
declare module 'irc-framework' {
  export interface ConnectOptions {
    host: string;
    port: number;
    tls: boolean;
    nick: string;
    username: string;
    gecos: string;
    password?: string;
    /** Off: the channels kit's reconnect loop owns reconnecting. */
    auto_reconnect: boolean;
    /** Seconds between the client's own PINGs (the liveness traffic on a quiet connection). */
    ping_interval: number;
    ping_timeout: number;
    version: string | null;
  }

  export interface MessageEvent {
    nick: string;
    ident: string;
    hostname: string;
    target: string;
    message: string;
    tags: Record<string, string | undefined>;
    time?: number;
    from_server: boolean;
  }

  export interface IrcErrorEvent {
    error: string;
    reason?: string;
    channel?: string;
    nick?: string;
  }

  interface Events {
    registered: (event: { nick: string }) => void;
    privmsg: (event: MessageEvent) => void;
    'nick in use': (event: { nick: string; reason: string }) => void;
    'irc error': (event: IrcErrorEvent) => void;
    raw: (event: { line: string; from_server: boolean }) => void;
    'socket close': (err?: Error | false) => void;
    close: (hadError: boolean) => void;
    join: (event: { nick: string; channel: string; ident: string; hostname: string }) => void;
  }

  export class Client {
    constructor(options?: Partial<ConnectOptions>);
    connect(options: ConnectOptions): void;
    on<E extends keyof Events>(event: E, listener: Events[E]): this;
    removeAllListeners(): this;
    join(channel: string): void;
    changeNick(nick: string): void;
    quit(message?: string): void;
    rawString(...args: string[]): string;
    caseLower(s: string): string;
    readonly connected: boolean;
    user: { nick: string; username: string; host: string };
    network: { isChannelName(name: string): boolean };
    connection: {
      /** Dropped when not connected (the callback still runs, on the next tick). */
      write(line: string, callback?: (err?: Error) => void): void;
      end(line?: string, force?: boolean): void;
      transport: { disposeSocket(): void } | null;
    };
  }
}
