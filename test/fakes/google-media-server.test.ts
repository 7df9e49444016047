/** The Google media fake's wire behaviour, with plain fetch: what a driver may rely on it to do like the Gemini API. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_FAKE_REFUSAL } from '../../testing-kit/src/media-conformance.ts';
import { startGoogleMediaFake, type GoogleMediaFake } from './google-media-server.ts';

let fake: GoogleMediaFake;
before(async () => void (fake = await startGoogleMediaFake({ key: 'k1', videoPolls: 1 })));
after(() => fake.stop());

const call = (path: string, body?: unknown, key: string | null = 'k1') =>
  fetch(`${fake.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-goog-api-key': key } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

type GoogleError = { error: { code: number; message: string; status: string; details?: Array<Record<string, string>> } };

test("403 PERMISSION_DENIED without a key, 400 API_KEY_INVALID with another one, Google's envelope both times", async () => {
  const none = await call('/v1beta/models/imagen-4.0-generate-001:predict', {}, null);
  assert.equal(none.status, 403);
  assert.equal(((await none.json()) as GoogleError).error.status, 'PERMISSION_DENIED');
  const wrong = await call('/v1beta/models/imagen-4.0-generate-001:predict', {}, 'other');
  assert.equal(wrong.status, 400);
  const body = (await wrong.json()) as GoogleError;
  assert.equal(body.error.status, 'INVALID_ARGUMENT');
  assert.equal(body.error.details?.[0].reason, 'API_KEY_INVALID');
});

test('Imagen :predict answers base64 PNGs, or only raiFilteredReason (with includeRaiReason) for a filtered prompt', async () => {
  const made = (await (
    await call('/v1beta/models/imagen-4.0-generate-001:predict', { instances: [{ prompt: 'a fox' }], parameters: { sampleCount: 2, aspectRatio: '16:9' } })
  ).json()) as {
    predictions: Array<{ bytesBase64Encoded: string; mimeType: string }>;
  };
  assert.equal(made.predictions.length, 2);
  assert.equal(Buffer.from(made.predictions[0].bytesBase64Encoded, 'base64').subarray(1, 4).toString('latin1'), 'PNG');
  const filtered = await call('/v1beta/models/imagen-4.0-generate-001:predict', {
    instances: [{ prompt: 'forbidden' }],
    parameters: { includeRaiReason: true },
  });
  assert.match(JSON.stringify(await filtered.json()), /raiFilteredReason/);
  const silent = await call('/v1beta/models/imagen-4.0-generate-001:predict', { instances: [{ prompt: 'forbidden' }] });
  assert.deepEqual(await silent.json(), {});
  assert.equal((await call('/v1beta/models/imagen-4.0-generate-001:predict', { instances: [{ prompt: 'x' }], parameters: { sampleCount: 5 } })).status, 400);
});

test('a Gemini image model answers an inlineData PNG, or an IMAGE_SAFETY stop with no parts', async () => {
  const body = (prompt: string) => ({ contents: [{ parts: [{ text: prompt }] }], generationConfig: { responseModalities: ['IMAGE'] } });
  const made = (await (await call('/v1beta/models/gemini-3.1-flash-image:generateContent', body('a fox'))).json()) as {
    candidates: Array<{ content: { parts: Array<{ inlineData: { mimeType: string; data: string } }> }; finishReason: string }>;
  };
  assert.equal(made.candidates[0].content.parts[0].inlineData.mimeType, 'image/png');
  const stopped = (await (await call('/v1beta/models/gemini-3.1-flash-image:generateContent', body('forbidden'))).json()) as {
    candidates: Array<{ content: { parts?: unknown[] }; finishReason: string }>;
  };
  assert.equal(stopped.candidates[0].finishReason, 'IMAGE_SAFETY');
  assert.equal(stopped.candidates[0].content.parts, undefined);
});

test('Veo: an operation name, not done for videoPolls reads, then done with a URI served only with the key', async () => {
  const { name } = (await (await call('/v1beta/models/veo-3.1-generate-preview:predictLongRunning', { instances: [{ prompt: 'waves' }] })).json()) as {
    name: string;
  };
  assert.match(name, /^models\/veo-3\.1-generate-preview\/operations\/\w+$/);
  assert.deepEqual(await (await call(`/v1beta/${name}`)).json(), { name });
  const done = (await (await call(`/v1beta/${name}`)).json()) as {
    done: boolean;
    response: { generateVideoResponse: { generatedSamples: Array<{ video: { uri: string } }> } };
  };
  assert.equal(done.done, true);
  const uri = done.response.generateVideoResponse.generatedSamples[0].video.uri;
  assert.equal((await fetch(uri)).status, 403);
  const video = await fetch(uri, { headers: { 'x-goog-api-key': 'k1' } });
  assert.equal(video.headers.get('content-type'), 'video/mp4');
  assert.equal(
    Buffer.from(await video.arrayBuffer())
      .subarray(4, 8)
      .toString('latin1'),
    'ftyp',
  );
  const bad = await call('/v1beta/models/veo-3.1-generate-preview:predictLongRunning', { instances: [{ prompt: 'w' }], parameters: { durationSeconds: 5 } });
  assert.equal(bad.status, 400);
});

test('failNext answers the next POST (not a GET in between): 400 with the refusal, 503, 429 with Retry-After', async () => {
  const post = () => call('/v1beta/models/imagen-4.0-generate-001:predict', { instances: [{ prompt: 'x' }] });
  fake.failNext('refuse');
  assert.equal((await call('/v1beta/models/veo-3.1-generate-preview/operations/none')).status, 404);
  const refused = await post();
  assert.equal(refused.status, 400);
  assert.match(((await refused.json()) as GoogleError).error.message, new RegExp(MEDIA_FAKE_REFUSAL));
  fake.failNext('outage');
  assert.equal((await post()).status, 503);
  fake.failNext('rate_limit');
  const limited = await post();
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await post()).status, 200);
});
