/**
 * The forms of generation that answer at once: an image, speech, music, and a transcription of an audio file. Each
 * shows what came back: the files (fetched with the key), the model and provider, and for audio its measured duration.
 * Text from a provider (a revised prompt, a transcript) is shown as text only (JSX escapes it).
 */
import { useState } from 'preact/hooks';
import { api, ErrorText, request, useAction } from '@talon/dashboard-kit';
import { chosen, formFields, MediaCard, MediaFile, onSubmitForm, ProviderSelect, seconds, type Provider } from './media-parts.tsx';

interface ImageResult {
  images: { url: string }[];
  model: string;
  provider: string;
  revised_prompt: string | null;
}
interface AudioResult {
  url: string;
  format: string;
  provider: string;
  model: string;
  duration_ms: number;
  sample_rate: number;
}
interface Transcript {
  text: string;
  provider: string;
  model: string;
  duration_ms: number;
}

const FORMATS = ['mp3', 'wav', 'opus', 'ogg', 'flac', 'aac'];

export function ImageForm({ providers }: { providers: Provider[] }) {
  const [provider, setProvider] = useState('');
  const [result, setResult] = useState<ImageResult>();
  const action = useAction();
  const submit = onSubmitForm(action, async (form) => {
    const f = formFields(form);
    setResult(undefined);
    const body = { prompt: f.prompt, ...(f.count ? { count: Number(f.count) } : {}), ...chosen(provider) };
    setResult(await api<ImageResult>('/api/media/image', { json: body }));
  });
  return (
    <MediaCard title="Image" label="Generate an image" providers={providers} capability="ImageGeneration" onSubmit={submit}>
      <div class="field">
        <label for="image-prompt">Prompt</label>
        <textarea id="image-prompt" name="prompt" required maxLength={4000} rows={2} />
      </div>
      <div class="inline">
        <ProviderSelect id="image-provider" providers={providers} capability="ImageGeneration" value={provider} onChange={setProvider} />
        <div class="field">
          <label for="image-count">Count</label>
          <input id="image-count" name="count" type="number" min="1" max="9" class="narrow" />
        </div>
        <button class="primary" disabled={action.busy}>
          {action.busy ? 'Generating…' : 'Generate image'}
        </button>
      </div>
      <ErrorText error={action.error} />
      {result && (
        <div role="status" aria-label="Generated images">
          <p class="muted">
            {result.provider} · {result.model}
          </p>
          {result.revised_prompt && <p>Revised prompt: {result.revised_prompt}</p>}
          <div class="media-results">
            {result.images.map((img, i) => (
              <MediaFile key={img.url} url={img.url} kind="image" label={`Generated image ${i + 1}`} />
            ))}
          </div>
        </div>
      )}
    </MediaCard>
  );
}

function AudioDone({ result, label }: { result: AudioResult; label: string }) {
  return (
    <div role="status" aria-label={label}>
      <p class="muted">
        {result.provider} · {result.model} · {result.format} · {seconds(result.duration_ms)} · {result.sample_rate} Hz
      </p>
      <MediaFile url={result.url} kind="audio" label={label} />
    </div>
  );
}

export function SpeechForm({ providers }: { providers: Provider[] }) {
  const [provider, setProvider] = useState('');
  const [result, setResult] = useState<AudioResult>();
  const action = useAction();
  const submit = onSubmitForm(action, async (form) => {
    const f = formFields(form);
    setResult(undefined);
    const body = {
      text: f.text,
      ...(f.voice ? { voice: f.voice } : {}),
      ...(f.format ? { format: f.format } : {}),
      ...(f.speed ? { speed: Number(f.speed) } : {}),
      ...chosen(provider),
    };
    setResult(await api<AudioResult>('/api/media/speech', { json: body }));
  });
  return (
    <MediaCard title="Speech" label="Generate speech" providers={providers} capability="TextToSpeech" onSubmit={submit}>
      <div class="field">
        <label for="speech-text">Text</label>
        <textarea id="speech-text" name="text" required maxLength={10000} rows={3} />
      </div>
      <div class="inline">
        <ProviderSelect id="speech-provider" providers={providers} capability="TextToSpeech" value={provider} onChange={setProvider} />
        <div class="field">
          <label for="speech-voice">Voice</label>
          <input id="speech-voice" name="voice" maxLength={200} class="narrow" placeholder="default" />
        </div>
        <div class="field">
          <label for="speech-format">Format</label>
          <select id="speech-format" name="format">
            <option value="">provider's</option>
            {FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="speech-speed">Speed</label>
          <input id="speech-speed" name="speed" type="number" min="0.25" max="4" step="0.05" class="narrow" placeholder="1" />
        </div>
        <button class="primary" disabled={action.busy}>
          {action.busy ? 'Speaking…' : 'Speak'}
        </button>
      </div>
      <ErrorText error={action.error} />
      {result && <AudioDone result={result} label="Generated speech" />}
    </MediaCard>
  );
}

export function MusicForm({ providers }: { providers: Provider[] }) {
  const [provider, setProvider] = useState('');
  const [result, setResult] = useState<AudioResult>();
  const action = useAction();
  const submit = onSubmitForm(action, async (form) => {
    const f = formFields(form);
    if (!f.prompt && !f.lyrics) throw new Error('Write a prompt or lyrics (or both).');
    setResult(undefined);
    const instrumental = (form.elements.namedItem('instrumental') as HTMLInputElement).checked;
    const body = { ...(f.prompt ? { prompt: f.prompt } : {}), ...(f.lyrics ? { lyrics: f.lyrics } : {}), instrumental, ...chosen(provider) };
    setResult(await api<AudioResult>('/api/media/music', { json: body }));
  });
  return (
    <MediaCard title="Music" label="Generate music" providers={providers} capability="MusicGeneration" onSubmit={submit}>
      <div class="field">
        <label for="music-prompt">Prompt</label>
        <textarea id="music-prompt" name="prompt" maxLength={2000} rows={2} />
      </div>
      <div class="field">
        <label for="music-lyrics">Lyrics</label>
        <textarea id="music-lyrics" name="lyrics" maxLength={3500} rows={2} />
      </div>
      <div class="inline">
        <ProviderSelect id="music-provider" providers={providers} capability="MusicGeneration" value={provider} onChange={setProvider} />
        <label>
          <input type="checkbox" name="instrumental" /> Instrumental
        </label>
        <button class="primary" disabled={action.busy}>
          {action.busy ? 'Composing…' : 'Compose'}
        </button>
      </div>
      <ErrorText error={action.error} />
      {result && <AudioDone result={result} label="Generated music" />}
    </MediaCard>
  );
}

export function TranscribeForm({ providers }: { providers: Provider[] }) {
  const [provider, setProvider] = useState('');
  const [result, setResult] = useState<Transcript>();
  const action = useAction();
  const submit = onSubmitForm(action, async (form) => {
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0];
    if (!file) throw new Error('Choose an audio file first.');
    const language = formFields(form).language;
    setResult(undefined);
    const body = new FormData();
    body.append('file', file);
    if (language) body.append('language', language);
    if (provider) body.append('provider', provider);
    setResult((await (await request('/api/media/transcribe', { body })).json()) as Transcript);
  });
  return (
    <MediaCard title="Transcription" label="Transcribe audio" providers={providers} capability="Transcription" onSubmit={submit}>
      <div class="inline">
        <div class="field">
          <label for="transcribe-file">Audio file</label>
          <input id="transcribe-file" name="file" type="file" accept="audio/*" required />
        </div>
        <div class="field">
          <label for="transcribe-language">Language</label>
          <input id="transcribe-language" name="language" maxLength={35} class="narrow" placeholder="en" />
        </div>
        <ProviderSelect id="transcribe-provider" providers={providers} capability="Transcription" value={provider} onChange={setProvider} />
        <button class="primary" disabled={action.busy}>
          {action.busy ? 'Listening…' : 'Transcribe'}
        </button>
      </div>
      <ErrorText error={action.error} />
      {result && (
        <div role="status" aria-label="Transcript">
          <p class="muted">
            {result.provider} · {result.model} · {seconds(result.duration_ms)}
          </p>
          <blockquote class="transcript">{result.text || '(no words heard)'}</blockquote>
        </div>
      )}
    </MediaCard>
  );
}
