/**
 * Hailuo video: `/video_generation` answers a task_id; `/query/video_generation?task_id=` reports Preparing,
 * Queueing, Processing, then Success with a file_id or Fail; `/files/retrieve?file_id=` gives the file's download_url
 * on MiniMax's CDN, which is fetched through the kit with no key (and expires, so it is never handed on). The model
 * is kept in the provider task id ('<model>:<task_id>'), so the result names the model the task ran on.
 */
import type { MediaDriverKit, VideoPoll, VideoRequest, VideoSubmitted } from '@talon/media';
import { minimaxApi, PROVIDER, type Envelope, type MinimaxApi } from './wire.ts';

export const DEFAULT_VIDEO_MODEL = 'MiniMax-Hailuo-2.3';
const CALL = { timeoutMs: 60_000, maxBytes: 1024 * 1024 };
const DOWNLOAD = { timeoutMs: 600_000, maxBytes: 100 * 1024 * 1024 };
const WAITING = new Set(['Preparing', 'Queueing', 'Processing']);

interface SubmitAnswer extends Envelope {
  task_id?: string | number;
}

interface QueryAnswer extends Envelope {
  status?: string;
  file_id?: string | number;
  video_width?: number;
  video_height?: number;
}

interface FileAnswer extends Envelope {
  file?: { download_url?: string };
}

/** Hailuo makes 6 or 10 seconds. */
const durationFor = (secs: number | undefined) => (secs === undefined ? undefined : secs <= 6 ? 6 : 10);

/** '<model>:<task_id>' back into its parts; the model has no ':', a task id might. */
function parseTaskId(providerTaskId: string): { model: string; taskId: string } {
  const at = providerTaskId.indexOf(':');
  return at > 0 ? { model: providerTaskId.slice(0, at), taskId: providerTaskId.slice(at + 1) } : { model: DEFAULT_VIDEO_MODEL, taskId: providerTaskId };
}

export async function submitVideo(kit: MediaDriverKit, request: VideoRequest): Promise<VideoSubmitted> {
  const model = request.model ?? DEFAULT_VIDEO_MODEL;
  const body = { model, prompt: request.prompt, duration: durationFor(request.durationSecs) };
  const answer = await minimaxApi(kit).post<SubmitAnswer>('/video_generation', body, { ...CALL, signal: request.signal });
  const taskId = answer.task_id === undefined || answer.task_id === '' ? undefined : String(answer.task_id);
  if (!taskId) throw kit.error('outage', `provider '${PROVIDER}' answered with no task_id`, { provider: PROVIDER });
  return { providerTaskId: `${model}:${taskId}`, model };
}

export async function pollVideo(kit: MediaDriverKit, providerTaskId: string, signal: AbortSignal): Promise<VideoPoll> {
  const { model, taskId } = parseTaskId(providerTaskId);
  const api = minimaxApi(kit);
  try {
    const query = await api.get<QueryAnswer>('/query/video_generation', { task_id: taskId }, { ...CALL, signal });
    if (query.status === 'Fail')
      return {
        state: 'failed',
        error: query.base_resp?.status_msg && query.base_resp.status_msg !== 'success' ? query.base_resp.status_msg : 'the video task failed',
      };
    if (query.status !== 'Success' || query.file_id === undefined) {
      if (query.status && !WAITING.has(query.status))
        throw kit.error('outage', `provider '${PROVIDER}' reported the unknown task status '${query.status}'`, { provider: PROVIDER });
      return { state: 'processing' };
    }
    const video = await fetchFile(kit, api, String(query.file_id), signal);
    return { state: 'completed', video, width: query.video_width, height: query.video_height, model };
  } catch (err) {
    // A refusal of the task (its prompt, an unknown id) ends it; anything else is retried by the poller.
    if (kit.isMediaError(err) && err.kind === 'refused') return { state: 'failed', error: err.message };
    throw err;
  }
}

async function fetchFile(kit: MediaDriverKit, api: MinimaxApi, fileId: string, signal: AbortSignal): Promise<Buffer> {
  const answer = await api.get<FileAnswer>('/files/retrieve', { file_id: fileId }, { ...CALL, signal });
  const url = answer.file?.download_url;
  if (!url) throw kit.error('outage', `provider '${PROVIDER}' gave no download_url for the video`, { provider: PROVIDER });
  return kit.download(PROVIDER, url, { ...DOWNLOAD, signal });
}
