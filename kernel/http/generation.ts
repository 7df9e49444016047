import http from 'node:http';
import { randomUUID } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { FastifySchemaCompiler, FastifyServerOptions, onRequestHookHandler, RouteOptions } from 'fastify';
import websocket from '@fastify/websocket';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  HTTP_STAGES,
  isUuid,
  type HttpResponseEvent,
  type RouteInfo,
  type RootHttp,
  type Routes,
} from '@talon/module-sdk';
import type { ModuleInstance } from '../loader/instance.ts';
import type { HookBus } from '../hooks.ts';
import { validatorCompiler } from './validation.ts';
import { lazyChildLogger } from './request-logger.ts';
import { answerError } from './front.ts';

export interface Generation {
  app: FastifyInstance;
  inner: http.Server;
  /** HTTP requests being answered (upgraded sockets are not counted: they live until closed). */
  inflight: number;
  /** Upgraded sockets (WebSockets) accepted by this generation, and the module whose route took each. */
  upgraded: Set<Socket>;
  owners: Map<Socket, string>;
  routes: RouteInfo[];
}

/** `newcomer`: a module whose routes changed; they are added last, so that a clash is blamed on it. */
export type GenerationOptions = {
  log: Logger;
  bodyLimit: number;
  trustedProxies: string[];
  hooks: HookBus;
  newcomer?: string;
};

/** Fastify writes no request lines (the logs module's access log comes from http.response); its diagnostics stay. */
class NoRequestLines extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
}

/**
 * Our compilers from the start: Fastify then never loads its own Ajv and fast-json-stringify compilers (tens of ms of
 * start-up). Its types describe the factories of those defaults; ours take a route schema as the setters' compilers do.
 */
const compilersFactory = {
  buildValidator: validatorCompiler,
  buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
} as unknown as NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'];

/** Each module copy's route validators (validation.ts): a reloaded copy's compiled schemas go with it. */
const validators = new WeakMap<ModuleInstance, FastifySchemaCompiler<object>>();

/** The route building of one module failed: the kernel can leave that module out and retry. */
export class RouteBuildError extends Error {
  override name = 'RouteBuildError';
  /** `why`: the problem in words, when the cause's own message says less (a clash names the owner of the route). */
  constructor(
    readonly module: string,
    cause: unknown,
    why = (cause as Error).message,
  ) {
    super(`module '${module}' routes failed: ${why}`, { cause });
  }
}

/** A generation being built: a whole Fastify app of the live modules (docs/architecture.md, HTTP). */
export class Draft {
  readonly routes: RouteInfo[] = [];
  /** Which module's route accepted each WebSocket, so a reload closes only that module's sockets. */
  readonly owners = new Map<Socket, string>();
  private current = 'kernel';
  private inner!: http.Server;
  readonly app: FastifyInstance;

  private constructor(options: GenerationOptions) {
    this.app = Fastify({
      serverFactory: (handler) => (this.inner = http.createServer(handler)),
      loggerInstance: options.log as unknown as FastifyBaseLogger,
      logController: new NoRequestLines(),
      childLoggerFactory: lazyChildLogger,
      bodyLimit: options.bodyLimit,
      // Only the proxies named in trusted_proxies may say who the client is (X-Forwarded-For): anyone else could.
      trustProxy: options.trustedProxies.length ? options.trustedProxies : false,
      genReqId: (req) => {
        const given = req.headers['x-request-id'];
        return typeof given === 'string' && isUuid(given) ? given : randomUUID();
      },
      return503OnClosing: false,
      // HEAD requests reach the GET routes through the front server (front.ts).
      exposeHeadRoutes: false,
      // Errors Fastify raises before routing (a malformed URL) still get the {error} envelope and a request id.
      frameworkErrors: (error, request, reply) =>
        answerError(
          reply.raw,
          options.hooks.kernel.http.baseHeaders,
          400,
          `bad request: ${error.message}`,
          String(request.id),
        ),
      routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
      schemaController: { compilersFactory },
    });
  }

  /** A draft with the root parts of `modules` and all their routes. */
  static async begin(modules: readonly ModuleInstance[], options: GenerationOptions): Promise<Draft> {
    const draft = new Draft(options);
    await draft.app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
    draft.app.addHook('onRoute', (route) => draft.onRoute(route));
    installRequestHooks(draft.app, options.hooks);
    for (const m of byStage(modules)) draft.blaming(m.id, () => draft.root(m));
    const last = (m: ModuleInstance) => (m.id === options.newcomer ? 1 : 0);
    for (const m of [...modules].sort((a, b) => last(a) - last(b))) await draft.add(m);
    return draft;
  }

  /** A module's root part; a stage that is not one of HTTP_STAGES fails the module (it would run nowhere). */
  private root(m: ModuleInstance): void {
    const stage = m.parts.httpStage;
    if (stage !== undefined && !HTTP_STAGES.includes(stage))
      throw new Error(`unknown httpStage '${String(stage)}': one of ${HTTP_STAGES.join(', ')}`);
    m.parts.http?.(this.app as unknown as RootHttp);
  }

  private onRoute(route: RouteOptions & { websocket?: boolean }): void {
    const { websocket = false, url } = route;
    const module = this.current;
    // The access log names the module that answered (http.response's `module`).
    route.config = { ...route.config, module };
    // @fastify/websocket marks its routes hidden from API documents; ours are part of the API.
    const schema = (
      websocket && route.schema ? { ...route.schema, hide: undefined } : route.schema
    ) as RouteInfo['schema'];
    for (const method of [route.method].flat())
      this.routes.push({ method, url, module, schema, websocket, public: Boolean(route.config?.public) });
    // Which module's route accepted each WebSocket: a hook on WebSocket routes only (on every route it cost each
    // request its time).
    if (!websocket) return;
    const own: onRequestHookHandler = (request, _reply, done) => {
      if (request.raw.headers.upgrade) this.owners.set(request.raw.socket, module);
      done();
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), own];
  }

  /** Adds a module's routes (a module with root parts must be in the draft from its beginning). */
  async add(m: ModuleInstance): Promise<void> {
    const routes = m.parts.routes;
    if (!routes) return;
    // One module per turn of the event loop: building a generation never holds other requests up for long.
    await nextTurn();
    const plugin = async (child: FastifyInstance) => {
      if (!validators.has(m)) validators.set(m, validatorCompiler());
      child.setValidatorCompiler(validators.get(m)!);
      this.blaming(m.id, () => routes(child as unknown as Routes));
    };
    // Named, or Fastify looks for the plugin's name among the exports of every loaded file.
    await this.step(this.app.register(Object.assign(plugin, { [Symbol.for('fastify.display-name')]: m.id })));
  }

  async finish(): Promise<Generation> {
    await nextTurn();
    await this.step(this.app.ready());
    return {
      app: this.app,
      inner: this.inner,
      inflight: 0,
      upgraded: new Set(),
      owners: this.owners,
      routes: this.routes,
    };
  }

  /**
   * A failed step drops the draft; a conflict Fastify finds (a duplicate route) blames the module that registered last.
   */
  private async step(work: PromiseLike<unknown>): Promise<void> {
    try {
      await work;
    } catch (err) {
      await this.app.close().catch(() => undefined);
      throw err instanceof RouteBuildError ? err : new RouteBuildError(this.current, err);
    }
  }

  private blaming(module: string, fn: () => void): void {
    this.current = module;
    try {
      fn();
    } catch (err) {
      const clash = /Method '(\w+)' already declared for route '([^']+)'/.exec((err as Error).message);
      const owner = clash && this.routes.find((r) => r.method === clash[1] && r.url === clash[2])?.module;
      throw new RouteBuildError(
        module,
        err,
        owner ? `${clash[1]} ${clash[2]} is already served by module '${owner}'` : undefined,
      );
    }
  }
}

/**
 * Modules in the order their root parts run: by the stage each names, then in module order (a stable sort). Hooks of
 * the root run in the order they were added, so this order is the pipeline's.
 */
function byStage(modules: readonly ModuleInstance[]): ModuleInstance[] {
  const rank = (m: ModuleInstance) => HTTP_STAGES.indexOf(m.parts.httpStage ?? 'handle');
  return [...modules].sort((a, b) => rank(a) - rank(b));
}

/** Resolves on a later turn of the event loop, after the requests that arrived meanwhile were taken up. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The kernel's http.request and http.response hooks. Each event is one object literal: `{ ...event, more }` makes V8
 * build a slow dictionary object, which cost about 4 µs of every request (and its garbage) when the response event was
 * made so.
 */
function installRequestHooks(app: FastifyInstance, hooks: HookBus): void {
  const { request: requestHook, response: responseHook } = hooks.kernel.http;
  app.addHook('onRequest', (req, _reply, done) => {
    if (requestHook.taps.length)
      requestHook.call({
        id: String(req.id),
        method: req.method,
        url: req.url,
        route: req.routeOptions.url,
        ip: req.ip,
      });
    done();
  });
  // The `error` of a refused or failed answer ({error} of the envelope), read as the body goes out: a 4xx or 5xx only.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode >= 400 && typeof payload === 'string' && responseHook.taps.length) {
      const error = errorOf(payload);
      if (error !== undefined) errors.set(req, error);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    if (responseHook.taps.length) responseHook.call(responseEvent(req, reply));
    done();
  });
}

const errors = new WeakMap<FastifyRequest, string>();
/** Longer messages are cut: the access log carries the gist, the module's own line the rest. */
const MAX_ERROR = 500;

function errorOf(payload: string): string | undefined {
  if (payload.length > 65536 || !payload.startsWith('{') || !payload.includes('"error"')) return undefined;
  try {
    const { error } = JSON.parse(payload) as { error?: unknown };
    return typeof error === 'string' ? error.slice(0, MAX_ERROR) : undefined;
  } catch {
    return undefined;
  }
}

function responseEvent(req: FastifyRequest, reply: FastifyReply): HttpResponseEvent {
  // Fastify builds routeOptions anew at each read: read once.
  const route = req.routeOptions;
  const { id, method, url, ip } = req;
  return {
    id: String(id),
    method,
    url,
    route: route.url,
    ip,
    statusCode: reply.statusCode,
    durationMs: reply.elapsedTime,
    quiet: route.config?.quiet === true,
    module: route.config?.module,
    error: errors.get(req),
  };
}
