import { badRequest, HttpError, isUuid, notFound, tooManyRequests, type Routes } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner } from '@talon/agents';
import type { AuthStatus } from '@talon/auth';
import type { HooksConfig } from '../config.ts';
import type { MinuteWindow } from '../services/rate.ts';
import { hookToken, sameToken } from '../services/token.ts';
import type { WakeInbox } from '../services/wakes.ts';

export interface HookRouteDeps {
  config: () => HooksConfig;
  /** The auth module's checks, while it runs (the admin key may learn that the hooks are off). */
  auth: () => Pick<AuthStatus, 'verify'> | undefined;
  agents: () => AgentRegistry;
  runner: () => AgentRunner;
  wakes: WakeInbox;
  window: MinuteWindow;
}

const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max, pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f]*$' }) as const;

const wakeBody = {
  type: 'object',
  properties: {
    text: { ...text(4096), description: 'what happened (no control characters but newlines and tabs)' },
    mode: { type: 'string', enum: ['now', 'next_heartbeat'], default: 'now' },
    agent: { type: 'string', minLength: 1, maxLength: 128, description: 'the agent it is meant for (id or name), if any' },
  },
  required: ['text'],
  additionalProperties: false,
} as const;

const agentBody = {
  type: 'object',
  properties: {
    message: text(16384),
    agent: { type: 'string', minLength: 1, maxLength: 128, description: 'agent id or name; default [hooks] default_agent, else the first agent' },
    timeout_secs: { type: 'integer', minimum: 10, maximum: 600, default: 120 },
  },
  required: ['message'],
  additionalProperties: false,
} as const;

const unauthorized = (message: string) => new HttpError(401, message, { headers: { 'www-authenticate': 'Bearer realm="talon-hooks"' } });

export function hookRoutes(app: Routes, deps: HookRouteDeps): void {
  // Before body validation: a caller without the token learns nothing about the body rules.
  app.addHook('onRequest', async (request) => {
    const config = deps.config();
    const given = /^Bearer[ \t]+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!config.enabled) {
      // Whether the hooks are on is the operator's to know: anyone else gets the 401 every other route gives.
      if (!operatorOrHookCaller(given, request.headers.authorization, config, deps))
        throw unauthorized(given ? 'Invalid hook token' : 'Missing Authorization: Bearer <hook token> header');
      throw notFound('inbound hooks are not enabled: set [hooks] enabled = true and a token (see docs/webhooks.md)');
    }
    if (!given) throw unauthorized('Missing Authorization: Bearer <hook token> header');
    if (!sameToken(given, hookToken(config))) throw unauthorized('Invalid hook token');
    const wait = deps.window.take(request.ip, config.rate_limit_per_minute);
    if (wait) throw tooManyRequests(`hook rate limit: ${config.rate_limit_per_minute} requests per minute`, wait);
  });
  const options = { config: { public: true }, bodyLimit: deps.config().max_body_bytes } as const;
  const tags = ['hooks'];

  app.post(
    '/api/hooks/wake',
    { ...options, schema: { summary: 'Publishes a wake event that triggers and agents react to', tags, body: wakeBody } },
    async (request) => {
      const { text, mode, agent } = request.body;
      const key = idempotencyKey(request.headers['idempotency-key']);
      const target = agent === undefined ? undefined : resolveAgent(deps.agents(), agent);
      const max = deps.config().max_pending_wakes;
      if ((await deps.wakes.pendingCount()) >= max) {
        throw new HttpError(503, `${max} wakes are waiting for delivery ([hooks] max_pending_wakes); try again later`, { headers: { 'retry-after': '60' } });
      }
      // Stored (committed) before the answer; published after it, so a crash in between delivers it at the next start.
      const wake = await deps.wakes.accept({ text, mode, agentId: target?.id }, key);
      if (!wake.duplicate) setImmediate(() => void deps.wakes.deliverPending());
      request.log.info({ mode, agentId: target?.id, wakeId: wake.id, duplicate: wake.duplicate }, 'wake hook');
      return { status: 'accepted', mode, event_id: wake.id, duplicate: wake.duplicate };
    },
  );

  app.post(
    '/api/hooks/agent',
    { ...options, schema: { summary: 'Sends an agent a message from an external caller and returns its reply', tags, body: agentBody } },
    async (request) => {
      const { message, agent, timeout_secs: timeoutSecs } = request.body;
      const target = resolveAgent(deps.agents(), agent ?? (deps.config().default_agent || undefined));
      const signal = AbortSignal.timeout(timeoutSecs * 1000);
      const result = await deps.runner().run({ agentId: target.id, message, signal, origin: 'hook' });
      return {
        status: 'completed',
        agent_id: target.id,
        response: result.response,
        usage: { input_tokens: result.inputTokens, output_tokens: result.outputTokens },
      };
    },
  );
}

/** A caller with the api_key (a service without one has nothing to present: verify passes) or with the configured hook token. */
function operatorOrHookCaller(given: string | undefined, authorization: string | undefined, config: HooksConfig, deps: HookRouteDeps): boolean {
  const token = hookToken(config);
  if (given !== undefined && token !== '' && sameToken(given, token)) return true;
  return deps.auth()?.verify(authorization) === undefined;
}

/** The optional Idempotency-Key header: a repeat of an accepted wake with the same key is not stored or delivered again. */
function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (!/^[\x21-\x7e]{1,128}$/.test(key)) throw badRequest('Idempotency-Key must be 1 to 128 visible ASCII characters');
  return key;
}

function resolveAgent(registry: AgentRegistry, ref: string | undefined): AgentRecord {
  if (ref === undefined) {
    const first = registry.list()[0];
    if (!first) throw notFound('no agent to send to: spawn one or name it in "agent"');
    return first;
  }
  const agent = isUuid(ref) ? registry.get(ref.toLowerCase()) : registry.findByName(ref);
  if (!agent) throw notFound(`agent '${ref}' not found`);
  return agent;
}
