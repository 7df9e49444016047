/**
 * image_generate, speech_generate, music_generate, video_generate and video_status: the routes' calls for agents.
 * Their parameters are the routes' schemas; the files they make are attached to the agent's reply (ToolOutput.files).
 */
import type { FileOwner, StoredFile, ToolDefinition } from '@talon/agents';
import type { FromSchema } from '@talon/module-sdk';
import { imageBody, musicBody, speechBody } from '../schemas.ts';
import { videoBody } from '../../routes/video.ts';
import { toView } from '../video/index.ts';
import type { VideoTaskStore } from '../video/store.ts';
import { callMeta, done, failure, given, ownerOf, type ToolDeps } from './common.ts';

const source = 'media';
/** A value without the `x-error` texts meant for HTTP clients (strict providers refuse unknown schema keywords). */
function withoutErrorTexts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutErrorTexts);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (k === 'x-error' ? [] : [[k, withoutErrorTexts(v)]])));
}

/** A tool's JSON Schema as the model sees it: the route's properties and required fields. */
const schema = (body: { properties: object; required?: readonly string[] }) => ({
  type: 'object',
  properties: withoutErrorTexts(body.properties) as Record<string, unknown>,
  ...(body.required ? { required: [...body.required] } : {}),
});

/** The video task rows video_status reads (for the owner the service's view leaves out). */
export type TaskRows = Pick<VideoTaskStore, 'get'>;

export function generateTools(deps: ToolDeps, tasks: TaskRows): ToolDefinition[] {
  return [
    {
      name: 'image_generate',
      source,
      description: 'Generate images from a description. The images are attached to your reply; the result lists their URLs.',
      inputSchema: schema(imageBody),
      async execute(input, ctx) {
        try {
          const made = await deps.core.image(given<FromSchema<typeof imageBody>>(input), callMeta(ctx));
          return done(made.response, made.files);
        } catch (err) {
          return failure('image_generate', err);
        }
      },
    },
    {
      name: 'speech_generate',
      source,
      description: 'Speak a text aloud (text to speech). The audio is attached to your reply; the result gives its URL, format and measured duration.',
      inputSchema: schema(speechBody),
      async execute(input, ctx) {
        try {
          const made = await deps.core.speech(given<FromSchema<typeof speechBody>>(input), callMeta(ctx));
          return done(made.response, made.files);
        } catch (err) {
          return failure('speech_generate', err);
        }
      },
    },
    {
      name: 'music_generate',
      source,
      description: "Generate music from a description ('prompt') or lyrics; give at least one of them. The audio is attached to your reply.",
      inputSchema: schema(musicBody),
      async execute(input, ctx) {
        const request = given<FromSchema<typeof musicBody>>(input);
        if (!request.prompt && !request.lyrics) return failure('music_generate', new Error("give 'prompt' or 'lyrics'"));
        try {
          const made = await deps.core.music(request, callMeta(ctx));
          return done(made.response, made.files);
        } catch (err) {
          return failure('music_generate', err);
        }
      },
    },
    ...videoTools(deps, tasks),
  ];
}

function videoTools(deps: ToolDeps, tasks: TaskRows): ToolDefinition[] {
  return [
    {
      name: 'video_generate',
      source,
      description: 'Start generating a video from a description. It takes minutes: the result is a task_id to check with video_status.',
      inputSchema: schema(videoBody),
      async execute(input, ctx) {
        try {
          const task = await deps.service.submitVideo(given<FromSchema<typeof videoBody>>(input), callMeta(ctx));
          return done({ ...task, status: 'processing', next: 'call video_status with this task_id in a minute or two' });
        } catch (err) {
          return failure('video_generate', err);
        }
      },
    },
    {
      name: 'video_status',
      source,
      description: 'The state of a video task from video_generate: processing, completed (the video is attached to your reply), failed or cancelled.',
      inputSchema: { type: 'object', properties: { task_id: { type: 'string', description: 'the task_id video_generate gave' } }, required: ['task_id'] },
      async execute(input, ctx) {
        try {
          const owner = ownerOf(ctx);
          const row = await tasks.get(String(input.task_id).toLowerCase());
          // Another agent's task is answered as an unknown one; a task of no agent (the HTTP route's) is anyone's.
          if (!row || (row.agent_id !== null && row.agent_id !== owner.agentId))
            return failure('video_status', new Error(`no video task '${String(input.task_id)}'`));
          const view = toView(row);
          return done(view, view.result ? await attachment(deps, view.result.file_id, owner) : []);
        } catch (err) {
          return failure('video_status', err);
        }
      },
    },
  ];
}

/** A stored file as an attachment: its row (type, name, size), never its bytes (a video is up to 100 MB). */
async function attachment(deps: ToolDeps, fileId: string, owner: FileOwner): Promise<StoredFile[]> {
  const file = await deps.files().describe(fileId, owner);
  return file ? [file] : [];
}
