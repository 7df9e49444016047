/**
 * The agents' media tools, run the way the agent loop runs them (agents.tools invoke) for a spawned agent: generated
 * files come back in ToolOutput.files, calls are metered for the agent, video goes through its task, long audio is
 * transcribed a window at a time, and media_describe hands the image to the agent's model.
 */
import { readdir, truncate } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clearProviderEnv, samplePng, sampleWav, startAgentTestKernel, waitFor, type AgentTestKernel } from '@talon/testing';
import type { AgentTools, ToolOutput, UploadFiles } from '@talon/agents';
import type { MediaCallRecord, MediaService } from '@talon/media';
import { which } from '../services/audio/which.ts';
import { startFixtureServer, type FixtureServer } from './fixture-server.ts';
import { FIXTURE_KEY } from './helpers.ts';

const fixtures = path.resolve(import.meta.dirname, '../../../test/fixtures/modules');
const ffmpeg = which('ffmpeg') ? false : 'ffmpeg is not installed (apt-get install ffmpeg)';

describe('media tools', () => {
  let k: AgentTestKernel;
  let fixture: FixtureServer;
  let agentId: string;
  const calls: MediaCallRecord[] = [];
  const service = <T extends object>(id: string) => k.kernel.services.view<T>(id);
  const invokeAs = async (as: string, tool: string, input: Record<string, unknown>): Promise<ToolOutput> =>
    (await service<AgentTools>('agents.tools').invoke({ tool, input, agentId: as, signal: new AbortController().signal, origin: 'test' })).output;
  const invoke = (tool: string, input: Record<string, unknown>) => invokeAs(agentId, tool, input);
  const json = (output: ToolOutput) => {
    assert.equal(output.isError, false, output.content);
    return JSON.parse(output.content) as Record<string, unknown>;
  };
  const stored = (bytes: Buffer, kind: 'image' | 'audio', owner: string | undefined = agentId) =>
    service<UploadFiles>('agents.uploads').saveGenerated({ kind, bytes, name: 'input', agentId: owner, source: { provider: 'test', model: 'test' } });

  before(async () => {
    clearProviderEnv();
    fixture = await startFixtureServer();
    process.env[FIXTURE_KEY] = 'fixture-key';
    k = await startAgentTestKernel({
      only: ['media-fixture', 'error-envelope'],
      config: `module_paths = ["${fixtures}"]\n[provider_urls]\nfixture = "${fixture.url}"\n[media]\nvideo_poll_first_secs = 0.05\nvideo_poll_max_secs = 0.1\n`,
    });
    const hooks = k.kernel.hooks.catalogue('media.hooks')!.hooks as { afterCall: { tapPromise(n: string, f: (r: MediaCallRecord) => Promise<void>): void } };
    hooks.afterCall.tapPromise('test', async (r) => void calls.push(r));
    agentId = await k.spawnAgent('artist', { capabilities: { tools: ['*'] } });
  });
  after(async () => {
    await k?.stop();
    await fixture?.stop();
    clearProviderEnv();
  });

  it("the tools' schemas are the routes' fields, without the HTTP error texts a strict provider would refuse", () => {
    const tools = service<AgentTools>('agents.tools');
    for (const name of ['image_generate', 'speech_generate', 'music_generate', 'video_generate', 'video_status', 'media_transcribe', 'media_describe']) {
      const schema = JSON.stringify(tools.find(name)?.inputSchema);
      assert.ok(schema, `${name} is offered`);
      assert.doesNotMatch(schema, /x-error/, name);
    }
    assert.deepEqual(tools.find('image_generate')!.inputSchema.required, ['prompt']);
  });

  it('image_generate: the images come back as files of the reply, metered for the agent', async () => {
    const output = await invoke('image_generate', { prompt: 'a fox', provider: 'fixture', count: 2 });
    const body = json(output);
    assert.equal((body.images as unknown[]).length, 2);
    assert.equal(output.files?.length, 2);
    assert.deepEqual(
      output.files!.map((f) => [f.content_type, f.url]),
      (body.images as Array<{ url: string }>).map((i) => ['image/png', i.url]),
    );
    const record = [...calls].reverse().find((c) => c.kind === 'image')!;
    assert.deepEqual([record.agentId, record.units], [agentId, 2]);
  });

  it('speech_generate and music_generate: the audio is a file of the reply; music needs a prompt or lyrics', async () => {
    const speech = await invoke('speech_generate', { text: 'Hello.', provider: 'fixture' });
    assert.equal(json(speech).duration_ms, 1000);
    assert.equal(speech.files?.[0]?.content_type, 'audio/wav');
    assert.equal((await invoke('music_generate', { lyrics: 'la', provider: 'fixture' })).files?.length, 1);
    const none = await invoke('music_generate', { instrumental: true, provider: 'fixture' });
    assert.equal(none.isError, true);
    assert.match(none.content, /'prompt' or 'lyrics'/);
  });

  it('a refused call is an error result with the reason, not a throw', async () => {
    fixture.failNext('refuse');
    const output = await invoke('image_generate', { prompt: 'a fox', provider: 'fixture' });
    assert.equal(output.isError, true);
    assert.match(output.content, /image_generate failed: .*refused by the fake content filter/);
  });

  it('video_generate then video_status: processing, then completed with the video attached', async () => {
    const task = json(await invoke('video_generate', { prompt: 'waves', provider: 'fixture' }));
    assert.equal(task.status, 'processing');
    const done = await waitFor(
      async () => {
        const output = await invoke('video_status', { task_id: task.task_id });
        return json(output).status === 'completed' ? output : undefined;
      },
      10_000,
      'the video task',
    );
    assert.equal(done.files?.[0]?.content_type, 'video/mp4');
    assert.match((await invoke('video_status', { task_id: 'nope' })).content, /no video task 'nope'/);
  });

  it('video_status attaches the finished video from its row (no bytes read), once per reply however often it is asked', async () => {
    const task = json(await invoke('video_generate', { prompt: 'tides', provider: 'fixture' }));
    const finished = await waitFor(
      async () => {
        const output = await invoke('video_status', { task_id: task.task_id });
        return json(output).status === 'completed' ? output : undefined;
      },
      10_000,
      'the video task',
    );
    const [video] = finished.files!;
    // The upload store keeps the bytes in $TALON_HOME/data/agents/uploads (docs/agents.md), named by the file's id.
    const uploads = path.join(k.home, 'data', 'agents', 'uploads');
    const names = (await readdir(uploads)).filter((n) => n === video.file_id || n.startsWith(`${video.file_id}.`));
    assert.equal(names.length, 1, `the video's file among ${uploads}'s`);
    await truncate(path.join(uploads, names[0]!), 1);
    assert.equal((await service<UploadFiles>('agents.uploads').read(video.file_id))?.bytes.length, 1, 'the stored file was cut');
    assert.deepEqual((await invoke('video_status', { task_id: task.task_id })).files, [video], "the size is the row's: the file was not read");

    const ask = { name: 'video_status', input: { task_id: task.task_id } };
    k.fake.enqueue({ toolCalls: [ask, ask] }, { toolCalls: [ask] }, { text: 'Your video.' });
    const res = await k.request(`/api/agents/${agentId}/message`, { method: 'POST', json: { message: 'is it done?' } });
    const reply = (await res.json()) as { files?: unknown[] };
    assert.deepEqual(reply.files, [video]);
  });

  it('media_transcribe: a long file a window at a time (has_more, next_start_sec); a short one whole', { skip: ffmpeg }, async () => {
    const file = await stored(sampleWav(5, 16000), 'audio');
    const first = json(await invoke('media_transcribe', { file_id: file.file_id, provider: 'fixture', max_secs: 2 }));
    assert.deepEqual([first.has_more, first.next_start_sec, first.duration_secs], [true, 2, 5]);
    const heard = (body: Record<string, unknown>) => Number(/heard (\d+) bytes/.exec(String(body.text))?.[1]);
    // 2 s of 16 kHz mono 16-bit PCM is 64,000 bytes, plus the WAV header.
    assert.ok(Math.abs(heard(first) - 64_044) < 200, `the window's size: ${heard(first)}`);
    const last = json(await invoke('media_transcribe', { file_id: file.file_id, provider: 'fixture', start_sec: 4, max_secs: 2 }));
    assert.equal(last.has_more, false);
    assert.equal(last.next_start_sec, undefined);
    assert.ok(Math.abs(heard(last) - 32_044) < 200, `the last window's size: ${heard(last)}`);
    const whole = json(await invoke('media_transcribe', { file_id: file.file_id, provider: 'fixture' }));
    assert.deepEqual([whole.has_more, heard(whole)], [false, 160_044]);
    assert.equal((await invoke('media_transcribe', { file_id: file.file_id, provider: 'fixture', start_sec: 9 })).isError, true);
  });

  it("media_describe: the image goes to the agent's model with the question", async () => {
    const file = await stored(samplePng(4, 4), 'image');
    k.fake.enqueue({ text: 'A tiny gradient.' });
    const body = json(await invoke('media_describe', { file_id: file.file_id, prompt: 'What colours?' }));
    assert.equal(body.description, 'A tiny gradient.');
    const sent = JSON.stringify(k.fake.requests.at(-1)!.body);
    assert.match(sent, /What colours\?/);
    assert.match(sent, new RegExp(samplePng(4, 4).toString('base64').slice(0, 40).replace(/[+/]/g, '.')));
    const audio = await stored(sampleWav(1), 'audio');
    assert.match((await invoke('media_describe', { file_id: audio.file_id })).content, /not an image/);
  });

  it("a tool reads only its agent's files and video tasks, and those of no agent; another agent's are answered as unknown ones", async () => {
    const stranger = await k.spawnAgent('stranger', { capabilities: { tools: ['*'] } });
    const unknown = '00000000-0000-4000-8000-000000000001';
    const theirImage = await stored(samplePng(4, 4), 'image', stranger);
    const theirAudio = await stored(sampleWav(1), 'audio', stranger);
    for (const [tool, file] of [
      ['media_describe', theirImage],
      ['media_transcribe', theirAudio],
    ] as const) {
      const foreign = await invoke(tool, { file_id: file.file_id });
      const none = await invoke(tool, { file_id: unknown });
      assert.equal(foreign.isError, true, tool);
      assert.equal(foreign.content, `${tool} failed: file not found`);
      assert.equal(none.content, foreign.content, `${tool}: no existence oracle`);
    }
    k.fake.enqueue({ text: 'Theirs.' });
    assert.equal(json(await invokeAs(stranger, 'media_describe', { file_id: theirImage.file_id })).description, 'Theirs.', 'the owner reads it');
    const routeImage = await stored(samplePng(4, 4), 'image', undefined);
    k.fake.enqueue({ text: 'Anyone may.' });
    assert.equal(json(await invoke('media_describe', { file_id: routeImage.file_id })).description, 'Anyone may.', 'a file of no agent');

    const theirTask = json(await invokeAs(stranger, 'video_generate', { prompt: 'theirs', provider: 'fixture' }));
    const foreign = await invoke('video_status', { task_id: theirTask.task_id });
    assert.equal(foreign.isError, true);
    assert.equal(foreign.content, `video_status failed: no video task '${String(theirTask.task_id)}'`);
    assert.equal(json(await invokeAs(stranger, 'video_status', { task_id: theirTask.task_id })).task_id, theirTask.task_id);
    const routeTask = await service<MediaService>('media.service').submitVideo({ prompt: 'anyone', provider: 'fixture' });
    assert.equal(json(await invoke('video_status', { task_id: routeTask.task_id })).task_id, routeTask.task_id, 'a task of no agent');
  });
});
