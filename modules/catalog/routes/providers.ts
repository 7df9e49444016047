/** /api/providers: status, keys, URL overrides, connectivity tests, local runtime detection, device-flow OAuth. */
import { badRequest, HttpError, notFound, type Routes } from '@talon/module-sdk';
import type { CatalogConfig } from '../config.ts';
import type { CatalogStore } from '../services/store.ts';
import type { DeviceFlows } from '../services/device-flow.ts';
import { probe, ProbeError } from '../services/http-probe.ts';
import {
  detectResponse,
  keyResponse,
  oauthPollResponse,
  oauthStartResponse,
  providerDetailResponse,
  providerListResponse,
  testResponse,
  urlResponse,
} from './responses.ts';
import { listableFormats, listing, testProvider } from '../services/provider-test.ts';

interface Deps {
  store: CatalogStore;
  flows: DeviceFlows;
  config: () => CatalogConfig;
}

/** Local model servers GET /api/providers/{name}/detect knows, with their default loopback address. */
const LOCAL_RUNTIMES: Record<string, { id: string; format: 'ollama' | 'openai'; url: string }> = {
  ollama: { id: 'ollama', format: 'ollama', url: 'http://127.0.0.1:11434' },
  lmstudio: { id: 'lmstudio', format: 'openai', url: 'http://127.0.0.1:1234/v1' },
  vllm: { id: 'vllm', format: 'openai', url: 'http://127.0.0.1:8000/v1' },
  llamacpp: { id: 'llamacpp', format: 'openai', url: 'http://127.0.0.1:8080/v1' },
  'llama.cpp': { id: 'llamacpp', format: 'openai', url: 'http://127.0.0.1:8080/v1' },
};

const DEVICE_FLOW_PROVIDER = 'github-copilot';

const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['name'] } as const;
const pollParams = { type: 'object', properties: { poll_id: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['poll_id'] } as const;
const keyBody = {
  type: 'object',
  properties: {
    api_key: { type: 'string', maxLength: 8192 },
    key: { type: 'string', maxLength: 8192, description: 'accepted for clients of the reference system' },
  },
  additionalProperties: false,
} as const;
const urlBody = {
  type: 'object',
  properties: { url: { type: ['string', 'null'], minLength: 1, maxLength: 2048, description: 'the new base URL; null removes the override' } },
  required: ['url'],
  additionalProperties: false,
} as const;

function checkedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest(`url '${raw}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`url must be http or https, got '${url.protocol}'`);
  if (url.username || url.password) throw badRequest('url must not carry credentials');
  return url.toString().replace(/\/+$/, '');
}

const upstream = (what: string, err: unknown): never => {
  if (err instanceof ProbeError) throw new HttpError(502, `${what}: ${err.message}`);
  throw err;
};

export function providerRoutes(app: Routes, { store, flows, config }: Deps): void {
  const tags = ['providers'];

  app.get('/api/providers', { schema: { summary: 'List providers with auth status', tags, response: { 200: providerListResponse } } }, async () => {
    const providers = store.providers().map((p) => store.view(p));
    return { providers, total: providers.length };
  });

  // Specific paths first: static segments win over :name in the router anyway.
  app.post(
    `/api/providers/${DEVICE_FLOW_PROVIDER}/oauth/start`,
    { schema: { summary: 'Start the device-flow login', tags, response: { 200: oauthStartResponse } } },
    async () => {
      try {
        return await flows.start(DEVICE_FLOW_PROVIDER, config().copilot_oauth);
      } catch (err) {
        return upstream('oauth start failed', err);
      }
    },
  );

  app.get(
    `/api/providers/${DEVICE_FLOW_PROVIDER}/oauth/poll/:poll_id`,
    { schema: { summary: 'Poll the device-flow login', tags, params: pollParams, response: { 200: oauthPollResponse } } },
    async (request) => {
      let result;
      try {
        result = await flows.poll(DEVICE_FLOW_PROVIDER, request.params.poll_id, config().copilot_oauth);
      } catch (err) {
        return upstream('oauth poll failed', err);
      }
      if (!result) throw notFound(`poll id '${request.params.poll_id}' not found`);
      if (result.status !== 'authorized') return { status: result.status, provider: DEVICE_FLOW_PROVIDER };
      await store.keys.set(DEVICE_FLOW_PROVIDER, result.token);
      request.log.info(`provider '${DEVICE_FLOW_PROVIDER}' authorized through the device flow`);
      return { status: 'authorized' as const, provider: DEVICE_FLOW_PROVIDER };
    },
  );

  app.get(
    '/api/providers/:name/detect',
    { schema: { summary: 'Detect a local model server and list its models', tags, params: nameParams, response: { 200: detectResponse } } },
    async (request) => {
      const runtime = LOCAL_RUNTIMES[request.params.name];
      if (!runtime) throw notFound(`'${request.params.name}' is not a local runtime (known: ${Object.keys(LOCAL_RUNTIMES).join(', ')})`);
      const cfg = config();
      const base = (cfg.detect_urls[runtime.id] ?? cfg.detect_urls[request.params.name] ?? store.baseUrl(runtime.id) ?? runtime.url).replace(/\/+$/, '');
      const format = listing(runtime.format)!;
      const { url } = format.request(base);
      try {
        const reply = await probe(url, { timeoutMs: cfg.detect_timeout_ms });
        if (reply.status !== 200)
          return { provider: runtime.id, reachable: false, base_url: base, models: [], error: `GET ${url} answered HTTP ${reply.status}` };
        return { provider: runtime.id, reachable: true, base_url: base, models: format.ids(reply.body), latency_ms: reply.latencyMs };
      } catch (err) {
        if (!(err instanceof ProbeError)) throw err;
        return { provider: runtime.id, reachable: false, base_url: base, models: [], error: err.message };
      }
    },
  );

  app.get(
    '/api/providers/:name',
    { schema: { summary: 'One provider: configuration and status', tags, params: nameParams, response: { 200: providerDetailResponse } } },
    async (request) => {
      const p = store.requireProvider(request.params.name);
      return { ...store.view(p), models: store.models({ provider: p.name }), media_models: store.mediaModels(p.name) };
    },
  );

  app.post(
    '/api/providers/:name/key',
    {
      schema: {
        summary: 'Store a provider API key (encrypted; never read back)',
        tags,
        params: nameParams,
        body: keyBody,
        response: { 200: keyResponse('configured') },
      },
    },
    async (request) => {
      const p = store.requireProvider(request.params.name);
      const key = (request.body.api_key ?? request.body.key ?? '').trim();
      if (!key) throw badRequest('api_key is required: a non-empty string');
      if (!p.key_required && !p.env_var) throw badRequest(`provider '${p.name}' does not use an API key`);
      await store.keys.set(p.name, key);
      request.log.info(`API key stored for provider '${p.name}'`);
      return { status: 'configured' as const, provider: p.name };
    },
  );

  app.delete(
    '/api/providers/:name/key',
    { schema: { summary: 'Remove a stored provider key', tags, params: nameParams, response: { 200: keyResponse('removed') } } },
    async (request) => {
      const p = store.requireProvider(request.params.name);
      if (!(await store.keys.delete(p.name))) throw notFound(`provider '${p.name}' has no stored key`);
      request.log.info(`API key removed for provider '${p.name}'`);
      return { status: 'removed' as const, provider: p.name };
    },
  );

  app.post(
    '/api/providers/:name/test',
    { schema: { summary: 'Test connectivity and the key with a model listing', tags, params: nameParams, response: { 200: testResponse } } },
    async (request) => {
      const p = store.requireProvider(request.params.name);
      const format = listing(p.api_format);
      if (!format)
        throw badRequest(
          `provider '${p.name}' speaks API format '${p.api_format}', whose model listing the test does not know (${listableFormats().join(', ')})`,
        );
      const key = store.apiKey(p.name);
      if (p.key_required && !key)
        throw badRequest(`provider '${p.name}' has no API key: ${p.env_var ? `set ${p.env_var} or ` : ''}POST /api/providers/${p.name}/key`);
      const base = store.baseUrl(p.name) ?? p.base_url;
      let outcome;
      try {
        outcome = await testProvider(format, base, key, config().test_timeout_ms);
      } catch (err) {
        return upstream(`provider '${p.name}' test failed`, err);
      }
      const known = store.models({ provider: p.name }).map((m) => m.id);
      const model_tested = known.find((id) => outcome.listed.includes(id)) ?? outcome.listed[0] ?? known[0] ?? null;
      return { status: 'ok' as const, provider: p.name, latency_ms: outcome.latency_ms, model_tested };
    },
  );

  app.put(
    '/api/providers/:name/url',
    { schema: { summary: 'Override the base URL of a provider', tags, params: nameParams, body: urlBody, response: { 200: urlResponse } } },
    async (request) => {
      const p = store.requireProvider(request.params.name);
      const { url } = request.body;
      const base_url = url === null ? await store.clearUrl(p) : await store.setUrl(p, checkedUrl(url));
      return { status: 'updated' as const, provider: p.name, base_url };
    },
  );
}
