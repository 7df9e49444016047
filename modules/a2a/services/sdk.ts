/**
 * The A2A SDK's server and client halves, loaded with the first A2A request or remote call instead of at
 * start-up (the largest package load of any module). Its enums (`@a2a-js/sdk`: Role, TaskState...) load the
 * same shared code, so they are reached through `a2aCore()` too; type-only imports cost nothing.
 */
import type * as Core from '@a2a-js/sdk';
import type * as Server from '@a2a-js/sdk/server';
import type * as LegacyServer from '@a2a-js/sdk/compat/v0_3/server';
import type * as Client from '@a2a-js/sdk/client';
import { lazyRequire } from '@talon/module-sdk';

export const a2aCore = lazyRequire<typeof Core>(import.meta.url, '@a2a-js/sdk');
export const a2aServer = lazyRequire<typeof Server>(import.meta.url, '@a2a-js/sdk/server');
export const a2aLegacyServer = lazyRequire<typeof LegacyServer>(import.meta.url, '@a2a-js/sdk/compat/v0_3/server');
export const a2aClient = lazyRequire<typeof Client>(import.meta.url, '@a2a-js/sdk/client');
