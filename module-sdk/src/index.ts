export { defineModule, isDefinedModule, MODULE_BRAND } from './define.ts';
export type { ModuleContext, ModuleDefinition, ModuleParts, DefinedModule, ConfigAlias } from './define.ts';
export { serviceRef, isServiceRef } from './refs.ts';
export type { ServiceRef } from './refs.ts';
export * from './hooks.ts';
export {
  HttpError,
  ConfigError,
  isConfigError,
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
export { defineEvents, isEventCatalogue, payload } from './events.ts';
export type {
  CustomEvent,
  EventAccess,
  EventCatalogue,
  EventChannel,
  EventMap,
  EventOf,
  EventPattern,
  Matching,
  Payload,
  PayloadsOf,
  SubscribeOptions,
  SubscriberStats,
  TalonEvent,
} from './events.ts';
export { safeJoin, isInside } from './paths.ts';
export { readOrCreateOnce } from './files.ts';
export { lazy, lazyRequire } from './lazy.ts';
export { redactSecrets, isSecretKey, REDACTED } from './redact.ts';
export { WriteBehind, isBusy, lockInTransaction } from './store.ts';
export type { Store, Queries, Params, SqlValue, Dialect, NodeAccess, NodeInfo, ChangeFeed } from './store.ts';
export { readPage, readLimit, paginate, pageQueryProperties, cappedLimitProperty } from './pagination.ts';
export type { Page, PageSize } from './pagination.ts';
export { openSse, LONG_LIVED } from './sse.ts';
export type { SseWriter } from './sse.ts';
export type { KernelSettings, JsonSchema } from './settings.ts';
export type { KernelApi, ConfigAccess, RouteInfo } from './kernel-api.ts';
export { HTTP_STAGES } from './http.ts';
export type { Routes, RootHttp, HttpStage, TalonRouteConfig, FastifyRequest, FastifyReply } from './http.ts';
export type { FromSchema } from 'json-schema-to-ts';

/** The SDK's version; module.toml `sdk` ranges are checked against it. */
export const SDK_VERSION = '0.2.0';
