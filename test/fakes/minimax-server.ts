/**
 * A fake of MiniMax's media API (`/v1/...`, the base the catalogue names), speaking its wire: `Authorization: Bearer`,
 * every answer HTTP 200 with the `base_resp {status_code, status_msg}` envelope (1004 no key, 2049 a wrong key, 2013
 * invalid parameters, 1026 sensitive input, 1002 rate limit), hex audio for speech (`/t2a_v2`) and music
 * (`/music_generation`), images as base64 or URLs (`/image_generation`), async video (`/video_generation` → task_id;
 * `/query/video_generation?task_id=` → Preparing, Queueing, Processing, then Success with a file_id or Fail;
 * `/files/retrieve?file_id=` → `file.download_url`) and transcription (`/speech_to_text`, multipart, asr-1.0).
 * Result URLs are on this fake's origin (as loopback, the only origin the media kit will fetch) and, like MiniMax's
 * CDN, need no key: `downloads` records whether one was sent anyway. Real bytes in the format asked for: samplePng,
 * the mp3 and flac tones, sampleWav, sampleMp4.
 *
 * Prompts steer it: "forbidden" is refused as sensitive (1026); a video prompt with "explode" ends in Fail.
 * Simplified: failNext applies to the next POST (a generation call, not a poll); no quotas; URLs never expire; every
 * answer is the same 1 s tone whatever the text; files and tasks live until stop().
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { MEDIA_FAKE_REFUSAL, type MediaFake } from '../../testing-kit/src/media-conformance.ts';
import { listen, nowSeconds, readParams, sendJson, type FakeFile } from './http.ts';
import { sendBytes, toneFile, type FailMode } from './media-fake-kit.ts';
import { sampleMp4, samplePng, sampleWav } from './media-samples.ts';

export interface MinimaxRecordedRequest {
  method: string;
  /** Path and query exactly as sent (percent-encoding included). */
  rawUrl: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** JSON or multipart fields (files as FakeFile). */
  body: Record<string, unknown>;
}

export interface MinimaxFakeOptions {
  key?: string;
  /** Queries of a task that answer before Success (Preparing, Queueing, then Processing; default 2). */
  videoPolls?: number;
}

export interface MinimaxFake extends MediaFake {
  /** The origin; the API base is `${url}/v1`. */
  url: string;
  key: string;
  requests: MinimaxRecordedRequest[];
  /** Each GET of a result file (image, audio, video): its path and whether an Authorization header came with it. */
  downloads: Array<{ path: string; authorization?: string }>;
  videoPolls: number;
  /** The id the next video task (or its file) gets, e.g. one with '&' or '#' in it; random otherwise. */
  nextTaskId?: string;
  nextFileId?: string;
  /** Answer image_generation with URLs even when base64 was asked for. */
  forceImageUrls: boolean;
  /** The envelope error the next POST answers with (HTTP 200), e.g. {status_code: 1026, status_msg: '...'}. */
  envelopeNext(status_code: number, status_msg: string): void;
}

const FAILURES: Record<FailMode, [number, string]> = {
  refuse: [1026, `input new_sensitive: ${MEDIA_FAKE_REFUSAL}`],
  outage: [1000, 'unknown error'],
  rate_limit: [1002, 'rate limit exceeded(RPM)'],
};
const RATIOS: Record<string, [number, number]> = {
  '1:1': [16, 16],
  '16:9': [32, 18],
  '4:3': [24, 18],
  '3:2': [24, 16],
  '2:3': [16, 24],
  '3:4': [18, 24],
  '9:16': [18, 32],
  '21:9': [42, 18],
};
const VIDEO_STAGES = ['Preparing', 'Queueing', 'Processing'];
const AUDIO_FORMATS = new Set(['mp3', 'wav', 'flac', 'pcm']);

type Body = Record<string, unknown>;
interface AudioSetting {
  format?: string;
  sample_rate?: number;
}
interface ImageBody {
  model?: unknown;
  prompt?: unknown;
  aspect_ratio?: string;
  width?: number;
  height?: number;
  n?: number;
  response_format?: string;
}
interface SpeechBody {
  model?: unknown;
  text?: unknown;
  voice_setting?: { voice_id?: string; speed?: number };
  audio_setting?: AudioSetting;
  output_format?: string;
}
interface MusicBody {
  model?: unknown;
  prompt?: string;
  lyrics?: string;
  is_instrumental?: boolean;
  lyrics_optimizer?: boolean;
  audio_setting?: AudioSetting;
  output_format?: string;
}
interface VideoBody {
  model?: unknown;
  prompt?: unknown;
  duration?: number;
}

interface Task {
  prompt: string;
  fileId: string;
  queries: number;
}

const ok = { status_code: 0, status_msg: 'success' };
const envelope = (res: http.ServerResponse, body: Record<string, unknown> = {}) => sendJson(res, 200, { ...body, base_resp: ok });
const fail = (res: http.ServerResponse, status_code: number, status_msg: string) => sendJson(res, 200, { base_resp: { status_code, status_msg } });
const traceId = () => randomBytes(16).toString('hex');

/** Audio formats MiniMax's ASR reads, told by their first bytes (WebM is not one). */
function audioKnown(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 12).toString('latin1');
  return (
    head.startsWith('RIFF') || head.startsWith('ID3') || head.startsWith('OggS') || head.startsWith('fLaC') || head.slice(4, 8) === 'ftyp' || bytes[0] === 0xff
  );
}

export async function startMinimaxFake(options: MinimaxFakeOptions = {}): Promise<MinimaxFake> {
  const key = options.key ?? 'test-key';
  const requests: MinimaxRecordedRequest[] = [];
  const downloads: MinimaxFake['downloads'] = [];
  const tasks = new Map<string, Task>();
  const files = new Map<string, { bytes: Buffer; type: string }>();
  let failNext: [number, string] | undefined;
  let seed = 0;

  /** A result file on this origin, the way MiniMax's CDN links look (a signed, expiring query). */
  function publish(bytes: Buffer, type: string, ext: string): string {
    const name = `${randomBytes(6).toString('hex')}.${ext}`;
    files.set(name, { bytes, type });
    return `${origin}/cdn/${name}?Expires=${nowSeconds() + 86400}&Signature=${randomBytes(8).toString('hex')}`;
  }

  const server = await listen(async (req, res, url) => {
    const cdn = /^\/cdn\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && cdn) {
      downloads.push({ path: url.pathname, authorization: req.headers.authorization });
      const file = files.get(cdn[1]);
      if (!file) return void res.writeHead(404).end();
      return sendBytes(res, file.type, file.bytes);
    }
    const body = await readBody(req, url);
    requests.push({ method: req.method ?? 'GET', rawUrl: req.url ?? '/', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ')) return fail(res, 1004, "login fail: Please carry the API secret key in the 'Authorization' field of the request header");
    if (auth.slice(7) !== key) return fail(res, 2049, 'invalid api key');
    if (req.method === 'POST' && failNext) {
      const [code, msg] = failNext;
      failNext = undefined;
      return fail(res, code, msg);
    }
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'POST /v1/image_generation':
        return image(res, body);
      case 'POST /v1/t2a_v2':
        return speech(res, body);
      case 'POST /v1/music_generation':
        return music(res, body);
      case 'POST /v1/video_generation':
        return submitVideo(res, body);
      case 'GET /v1/query/video_generation':
        return queryVideo(res, url.searchParams.get('task_id'));
      case 'GET /v1/files/retrieve':
        return retrieve(res, url.searchParams.get('file_id'));
      case 'POST /v1/speech_to_text':
        return transcribe(req, res, body);
    }
    sendJson(res, 404, { base_resp: { status_code: 404, status_msg: 'not found' } });
  });

  async function readBody(req: http.IncomingMessage, url: URL): Promise<Record<string, unknown>> {
    // readParams merges the query in; the recorded body is the body alone.
    const all = await readParams(req, url);
    for (const k of url.searchParams.keys()) delete all[k];
    return all;
  }

  function image(res: http.ServerResponse, body: Body): void {
    const { model, prompt, aspect_ratio, width, height, n = 1, response_format = 'url' } = body as ImageBody;
    if (model !== 'image-01' && model !== 'image-01-live') return fail(res, 2013, 'invalid params, model');
    if (typeof prompt !== 'string' || !prompt) return fail(res, 2013, 'invalid params, prompt');
    if (!Number.isInteger(n) || n < 1 || n > 9) return fail(res, 2013, 'invalid params, n should be in [1, 9]');
    if (aspect_ratio !== undefined && !(aspect_ratio in RATIOS)) return fail(res, 2013, 'invalid params, aspect_ratio');
    const sized = [width, height].filter((v) => v !== undefined) as number[];
    if (sized.length === 1 || sized.some((v) => !Number.isInteger(v) || v < 512 || v > 2048 || v % 8))
      return fail(res, 2013, 'invalid params, width and height must both be set, in [512, 2048] and divisible by 8');
    if (prompt.includes('forbidden')) return fail(res, 1026, 'input new_sensitive');
    // An aspect ratio wins over width and height; the fake's images are small but keep the ratio.
    const [w, h] = aspect_ratio ? RATIOS[aspect_ratio] : sized.length ? [width! / 64, height! / 64] : [16, 16];
    const pngs = Array.from({ length: n }, () => samplePng(Math.round(w), Math.round(h), seed++));
    const data =
      response_format === 'base64' && !fake.forceImageUrls
        ? { image_base64: pngs.map((p) => p.toString('base64')) }
        : { image_urls: pngs.map((p) => publish(p, 'image/png', 'png')) };
    envelope(res, { id: traceId(), data, metadata: { failed_count: '0', success_count: String(n) } });
  }

  /** The audio of a speech or music answer as MiniMax gives it, in the format asked for: hex in the JSON, or a URL. */
  function audioData(settings: AudioSetting | undefined, outputFormat: unknown): string | undefined {
    const format = settings?.format ?? 'mp3';
    if (!AUDIO_FORMATS.has(format)) return undefined;
    const wav = sampleWav(1, settings?.sample_rate ?? 32000);
    const bytes = format === 'mp3' || format === 'flac' ? toneFile(format) : format === 'pcm' ? wav.subarray(44) : wav;
    return outputFormat === 'url' ? publish(bytes, `audio/${format}`, format) : bytes.toString('hex');
  }

  function speech(res: http.ServerResponse, body: Body): void {
    const { model, text, voice_setting, audio_setting, output_format = 'hex' } = body as SpeechBody;
    if (typeof model !== 'string' || !model.startsWith('speech-')) return fail(res, 2013, 'invalid params, model');
    if (typeof text !== 'string' || !text.trim()) return fail(res, 2013, 'invalid params, text');
    const voice = voice_setting;
    if (!voice?.voice_id) return fail(res, 2013, 'invalid params, voice_id');
    if (voice.speed !== undefined && (voice.speed < 0.5 || voice.speed > 2)) return fail(res, 2013, 'invalid params, speed should be in [0.5, 2]');
    if (text.includes('forbidden')) return fail(res, 1026, 'input new_sensitive');
    const settings = audio_setting;
    const audio = audioData(settings, output_format);
    if (!audio) return fail(res, 2013, 'invalid params, audio_setting.format');
    envelope(res, {
      data: { audio, status: 2, ced: '' },
      extra_info: {
        audio_length: 1000,
        audio_sample_rate: settings?.sample_rate ?? 32000,
        audio_format: settings?.format ?? 'mp3',
        usage_characters: text.length,
      },
      trace_id: traceId(),
    });
  }

  function music(res: http.ServerResponse, body: Body): void {
    const { model, prompt, lyrics, is_instrumental, lyrics_optimizer, audio_setting, output_format = 'hex' } = body as MusicBody;
    if (typeof model !== 'string' || !model.startsWith('music-')) return fail(res, 2013, 'invalid params, model');
    if (is_instrumental && !prompt) return fail(res, 2013, 'invalid params, prompt is required when is_instrumental is true');
    if (!is_instrumental && !lyrics_optimizer && !lyrics) return fail(res, 2013, 'invalid params, lyrics is required');
    if (`${prompt ?? ''} ${lyrics ?? ''}`.includes('forbidden')) return fail(res, 1026, 'input new_sensitive');
    const settings = audio_setting;
    const audio = audioData(settings, output_format);
    if (!audio) return fail(res, 2013, 'invalid params, audio_setting.format');
    envelope(res, {
      data: { audio, status: 2 },
      extra_info: { music_duration: 1000, music_sample_rate: settings?.sample_rate ?? 44100, music_channel: 1 },
      trace_id: traceId(),
    });
  }

  function submitVideo(res: http.ServerResponse, body: Body): void {
    const { model, prompt, duration } = body as VideoBody;
    if (typeof model !== 'string' || !/^(MiniMax-Hailuo|T2V|I2V|S2V)/.test(model)) return fail(res, 2013, 'invalid params, model');
    if (typeof prompt !== 'string' || !prompt) return fail(res, 2013, 'invalid params, prompt');
    if (duration !== undefined && duration !== 6 && duration !== 10) return fail(res, 2013, 'invalid params, duration should be 6 or 10');
    if (prompt.includes('forbidden')) return fail(res, 1026, 'input new_sensitive');
    const taskId = fake.nextTaskId ?? String(Date.now()) + String(seed++);
    const fileId = fake.nextFileId ?? String(Date.now() + 1) + String(seed++);
    fake.nextTaskId = fake.nextFileId = undefined;
    tasks.set(taskId, { prompt, fileId, queries: 0 });
    envelope(res, { task_id: taskId });
  }

  function queryVideo(res: http.ServerResponse, taskId: string | null): void {
    const task = taskId === null ? undefined : tasks.get(taskId);
    if (!task) return fail(res, 2013, 'invalid params, task_id');
    task.queries++;
    if (task.queries <= fake.videoPolls) return envelope(res, { task_id: taskId, status: VIDEO_STAGES[Math.min(task.queries - 1, VIDEO_STAGES.length - 1)] });
    if (task.prompt.includes('explode')) return envelope(res, { task_id: taskId, status: 'Fail' });
    files.set(`video-${task.fileId}`, { bytes: sampleMp4(), type: 'video/mp4' });
    envelope(res, { task_id: taskId, status: 'Success', file_id: task.fileId, video_width: 160, video_height: 90 });
  }

  function retrieve(res: http.ServerResponse, fileId: string | null): void {
    const file = fileId === null ? undefined : files.get(`video-${fileId}`);
    if (!file) return fail(res, 2013, 'invalid params, file_id');
    const download_url = publish(file.bytes, file.type, 'mp4');
    envelope(res, {
      file: {
        file_id: fileId,
        bytes: file.bytes.length,
        created_at: nowSeconds(),
        filename: 'output.mp4',
        purpose: 'video_generation',
        download_url,
      },
    });
  }

  function transcribe(req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>): void {
    const file = body.file as FakeFile | undefined;
    if (body.model !== 'asr-1.0') return fail(res, 2013, 'invalid params, model');
    if (!file?.content.length) return fail(res, 2013, 'invalid params, file');
    if (!audioKnown(file.content)) return fail(res, 2013, 'invalid params, unsupported audio format');
    const language = req.headers.language;
    envelope(res, { text: language === 'fr' ? 'bonjour du faux transcripteur' : 'hello from the fake transcriber', duration: 1, trace_id: traceId() });
  }

  const origin = `http://127.0.0.1:${server.port}`;
  const fake: MinimaxFake = {
    url: origin,
    key,
    requests,
    downloads,
    videoPolls: options.videoPolls ?? 2,
    forceImageUrls: false,
    failNext: (mode) => void (failNext = FAILURES[mode]),
    envelopeNext: (code, msg) => void (failNext = [code, msg]),
    stop: () => server.close(),
  };
  return fake;
}
