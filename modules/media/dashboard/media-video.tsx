/**
 * Video: a form that submits a task, and the latest tasks with their state, read again every few seconds while one is
 * still processing (and not once all have ended). A finished task plays in the page; a processing one shows its
 * progress and can be cancelled. The list is marked busy while a new listing loads.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ConfirmButton, ErrorText, fmtTime, seg, useAction, useApi } from '@talon/dashboard-kit';
import { chosen, formFields, MediaCard, MediaFile, onSubmitForm, ProviderSelect, type Provider } from './media-parts.tsx';

interface VideoTask {
  task_id: string;
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  provider: string;
  prompt: string;
  created_at: string;
  progress?: number;
  result?: { file_url: string; width: number; height: number; duration_secs: number; model: string };
  error?: string;
}

const REFRESH_MS = 3_000;
const LIMIT = 20;
/** A prompt short enough to name a task's controls. */
const named = (prompt: string) => (prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt);

export function VideoSection({ providers }: { providers: Provider[] }) {
  const tasks = useApi<{ tasks: VideoTask[]; total: number }>(`/api/media/video?limit=${LIMIT}`);
  const list = tasks.data?.tasks ?? [];
  const processing = list.some((t) => t.status === 'processing');
  useEffect(() => {
    if (!processing) return;
    const timer = setInterval(() => void tasks.reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [processing, tasks.reload]);
  return (
    <>
      <VideoForm providers={providers} onSubmitted={() => void tasks.reload()} />
      <section class="card" aria-labelledby="video-tasks-title">
        <h2 id="video-tasks-title">Video tasks</h2>
        <ErrorText error={tasks.error} />
        {tasks.data && !list.length && <p class="muted">No video task yet.</p>}
        {tasks.data && tasks.data.total > list.length && (
          <p class="muted">
            The latest {list.length} of {tasks.data.total}.
          </p>
        )}
        <ul class="video-tasks" aria-label="Video tasks" aria-busy={tasks.loading}>
          {list.map((t) => (
            <VideoTaskItem key={t.task_id} task={t} onChanged={() => void tasks.reload()} />
          ))}
        </ul>
      </section>
    </>
  );
}

function VideoForm({ providers, onSubmitted }: { providers: Provider[]; onSubmitted: () => void }) {
  const [provider, setProvider] = useState('');
  const action = useAction();
  const submit = onSubmitForm(action, async (form) => {
    const f = formFields(form);
    const body = { prompt: f.prompt, ...(f.duration_secs ? { duration_secs: Number(f.duration_secs) } : {}), ...chosen(provider) };
    await api('/api/media/video', { json: body });
    form.reset();
    onSubmitted();
  });
  return (
    <MediaCard title="Video" label="Generate a video" providers={providers} capability="VideoGeneration" onSubmit={submit}>
      <div class="field">
        <label for="video-prompt">Prompt</label>
        <textarea id="video-prompt" name="prompt" required maxLength={2000} rows={2} />
      </div>
      <div class="inline">
        <ProviderSelect id="video-provider" providers={providers} capability="VideoGeneration" value={provider} onChange={setProvider} />
        <div class="field">
          <label for="video-duration">Seconds</label>
          <input id="video-duration" name="duration_secs" type="number" min="1" max="60" class="narrow" />
        </div>
        <button class="primary" disabled={action.busy}>
          {action.busy ? 'Submitting…' : 'Submit video task'}
        </button>
      </div>
      <ErrorText error={action.error} />
    </MediaCard>
  );
}

function VideoTaskItem({ task: t, onChanged }: { task: VideoTask; onChanged: () => void }) {
  const action = useAction();
  const cancel = () =>
    void action.run(async () => {
      await api(`/api/media/video/${seg(t.task_id)}`, { method: 'DELETE' });
      onChanged();
    });
  const name = named(t.prompt);
  return (
    <li aria-label={`Video task ${name}`} data-task={t.task_id}>
      <p>
        <span class={`badge video-${t.status}`}>{t.status}</span> <strong>{t.prompt}</strong>{' '}
        <span class="muted">
          {t.provider} · {fmtTime(t.created_at)}
        </span>
      </p>
      {t.status === 'processing' && (
        <div class="inline">
          <progress max={100} value={t.progress} aria-label={`Progress of ${name}`}>
            {t.progress === undefined ? 'waiting' : `${t.progress}%`}
          </progress>
          <ConfirmButton label={`Cancel video task ${name}`} confirm="Cancel the task now" onConfirm={cancel} disabled={action.busy} small>
            Cancel
          </ConfirmButton>
        </div>
      )}
      {t.status === 'failed' && t.error && <p class="warn">{t.error}</p>}
      {t.status === 'cancelled' && t.error && t.error !== 'cancelled' && <p class="muted">{t.error}</p>}
      {t.result && (
        <>
          <p class="muted">
            {t.result.model} · {t.result.width}×{t.result.height} · {t.result.duration_secs} s
          </p>
          <MediaFile url={t.result.file_url} kind="video" label={`Video of ${name}`} />
        </>
      )}
      <ErrorText error={action.error} />
    </li>
  );
}
