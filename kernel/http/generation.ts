import http from 'node:http';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyBaseLogger } from 'fastify';
import websocket from '@fastify/websocket';
import type { Logger } from 'pino';
import type { RouteInfo, RootHttp, Routes } from '@talon/module-sdk';
import { isUuid } from '@talon/module-sdk';
import type { ModuleInstance } from '../loader/instance.ts';
import type { HookBus } from '../hooks.ts';
import { validatorCompiler } from './validation.ts';
import { installBodyParsers } from './body.ts';
import { AccessLog } from './access-log.ts';
import { lazyChildLogger } from './request-logger.ts';

export interface Generation {
  app: FastifyInstance;
  inner: http.Server;
  /** HTTP requests being answered (upgraded sockets are not counted: they live until closed). */
  inflight: number;
  /** Upgraded sockets (WebSockets) accepted by this generation, and the module whose route took each. */
  upgraded: Set<import('node:net').Socket>;
  owners: Map<import('node:net').Socket, string>;
  routes: RouteInfo[];
  readonly number: number;
}

/** The route building of one module failed: the kernel can leave that module out and retry. */
export class RouteBuildError extends Error {
  constructor(
    readonly module: string,
    cause: Error,
  ) {
    super(`module '${module}' routes failed: ${cause.message}`);
    this.name = 'RouteBuildError';
  }
}

let generations = 0;

/**
 * Builds a complete Fastify app from the live modules. Fastify cannot add
 * routes once ready, so every module change builds a new generation and the
 * front server swaps to it (see docs/architecture.md).
 */
export async function buildGeneration(modules: readonly ModuleInstance[], options: { log: Logger; bodyLimit: number; hooks: HookBus }): Promise<Generation> {
  let inner!: http.Server;
  const app = Fastify({
    serverFactory: (handler) => (inner = http.createServer(handler)),
    loggerInstance: options.log as unknown as FastifyBaseLogger,
    logController: new AccessLog(),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: options.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && isUuid(given) ? given : randomUUID();
    },
    return503OnClosing: false,
    // Errors Fastify raises before routing (a malformed URL) still get the {error} envelope and a request id.
    frameworkErrors: (error, request, reply) => {
      const body = JSON.stringify({ error: `bad request: ${error.message}` });
      reply.raw.writeHead(400, {
        ...options.hooks.kernel.http.baseHeaders.call({}),
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': String(request.id),
      });
      reply.raw.end(body);
    },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installBodyParsers(app);
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });

  const routes: RouteInfo[] = [];
  let current = 'kernel';
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const websocket = Boolean((route as { websocket?: boolean }).websocket);
    // @fastify/websocket marks its routes hidden from API documents; ours are part of the API.
    const schema = websocket && route.schema ? { ...route.schema, hide: undefined } : route.schema;
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, module: current, schema: schema as RouteInfo['schema'], websocket, public: Boolean(route.config?.public) });
    }
  });

  const { request: requestHook, response: responseHook } = options.hooks.kernel.http;
  app.addHook('onRequest', (req, _reply, done) => {
    if (requestHook.taps.length) requestHook.call({ id: String(req.id), method: req.method, url: req.url, route: req.routeOptions.url, ip: req.ip });
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    if (responseHook.taps.length) {
      responseHook.call({
        id: String(req.id),
        method: req.method,
        url: req.url,
        route: req.routeOptions.url,
        ip: req.ip,
        statusCode: reply.statusCode,
        durationMs: reply.elapsedTime,
      });
    }
    done();
  });

  for (const m of modules) {
    if (!m.parts.http) continue;
    current = m.id;
    try {
      m.parts.http(app as unknown as RootHttp);
    } catch (err) {
      throw new RouteBuildError(m.id, err as Error);
    }
  }
  const owners = new Map<import('node:net').Socket, string>();
  for (const m of modules) {
    const routes = m.parts.routes;
    if (!routes) continue;
    const plugin = async (child: FastifyInstance) => {
      // One module per turn of the event loop: building a generation never holds other requests up for long.
      await new Promise((resolve) => setImmediate(resolve));
      current = m.id;
      // Remember which module a WebSocket belongs to, so a reload closes only that module's sockets.
      child.addHook('onRequest', (request, _reply, done) => {
        if (request.raw.headers.upgrade) owners.set(request.raw.socket, m.id);
        done();
      });
      try {
        routes(child as unknown as Routes);
      } catch (err) {
        throw new RouteBuildError(m.id, err as Error);
      }
    };
    // Named, or Fastify looks for the plugin's name among the exports of every loaded file.
    app.register(Object.assign(plugin, { [Symbol.for('fastify.display-name')]: m.id }));
  }
  try {
    await app.ready();
  } catch (err) {
    await app.close().catch(() => undefined);
    if (err instanceof RouteBuildError) throw err;
    // A conflict found at ready() (duplicate route): blame the module that registered last.
    throw new RouteBuildError(current, err as Error);
  }
  return { app, inner, inflight: 0, upgraded: new Set(), owners, routes, number: ++generations };
}
