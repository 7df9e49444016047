export { defineModule, isDefinedModule, MODULE_BRAND } from './define.ts';
export type { ModuleContext, ModuleDefinition, DefinedModule, TalonPaths } from './define.ts';
export { serviceRef } from './refs.ts';
export type { ServiceRef } from './refs.ts';
export { defineHooks, createKernelHooks, STAGE } from './hooks.ts';
export type {
  HookRef,
  HookAccess,
  TapFacade,
  HookTap,
  KernelHooks,
  ModuleInfo,
  ConfigChange,
  HttpRequestEvent,
  HttpResponseEvent,
  TapOptions,
} from './hooks.ts';
export {
  HttpError,
  badRequest,
  unauthorized,
  forbidden,
  notFound,
  conflict,
  payloadTooLarge,
  tooManyRequests,
  errorBody,
  isUuid,
  requireUuid,
} from './errors.ts';
export { safeJoin, isInside } from './paths.ts';
export { prepared, statements } from './sql.ts';
export { readPage, paginate, pageQueryProperties } from './pagination.ts';
export type { Page } from './pagination.ts';
export { openSse } from './sse.ts';
export type { SseWriter } from './sse.ts';
export { kernelSettingsSchema } from './settings.ts';
export type { KernelSettings, JsonSchema } from './settings.ts';
export type { KernelApi, ConfigApi, RouteInfo, LogBus } from './kernel-api.ts';
export type { Routes, RootHttp, TalonRouteConfig, FastifyRequest, FastifyReply } from './http.ts';
export type { FromSchema } from 'json-schema-to-ts';
