/** A kernel with the media module and the test drivers of test/fixtures/modules/media-fixture, against the fixture server. */
import path from 'node:path';
import assert from 'node:assert/strict';
import { startMediaHarness, type MediaHarness, type MediaTestCallRecord } from '@talon/testing';
import { startFixtureServer, type FixtureServer } from './fixture-server.ts';

export const FIXTURE_KEY = 'MEDIA_FIXTURE_API_KEY';
const fixtures = path.resolve(import.meta.dirname, '../../../test/fixtures/modules');

export interface MediaTestKernel extends MediaHarness {
  fixture: FixtureServer;
  /** A live view of a service of the kernel by id. */
  service<T extends object>(id: string): T;
}

/** `media`: more [media] keys (TOML lines). `only`: further modules. */
export async function startMediaTest(options: { media?: string; only?: string[] } = {}): Promise<MediaTestKernel> {
  let fixture!: FixtureServer;
  const h = await startMediaHarness({
    name: 'media',
    only: ['media-fixture', ...(options.only ?? [])],
    provider: 'fixture',
    env: { [FIXTURE_KEY]: 'fixture-key' },
    capabilities: [],
    fake: async () => (fixture = await startFixtureServer()),
    config: (url) => `module_paths = ["${fixtures}"]\n[provider_urls]\nfixture = "${url}"\n[media]\n${options.media ?? ''}\n`,
  });
  return { ...h, fixture, service: <T extends object>(id: string) => h.kernel.kernel.services.view<T>(id) };
}

/** The answer's JSON, after checking its status (the body is shown when it differs). */
export async function expectJson<T = Record<string, unknown>>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A 400 (or `status`) whose error names `field`. */
export async function expectRefusal(response: Response, status: number, field: RegExp): Promise<string> {
  const body = await expectJson<{ error: string }>(response, status);
  assert.match(body.error, field);
  return body.error;
}

/** The latest afterCall record of a kind. */
export function lastCall(h: MediaHarness, kind: string): MediaTestCallRecord {
  const record = [...h.calls].reverse().find((c) => c.kind === kind);
  assert.ok(record, `an afterCall record of ${kind}`);
  return record;
}
