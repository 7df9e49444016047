/**
 * Media: the providers, whether each is configured, what each can do (and what to set or install for the rest), then
 * one form per kind of generation — image, speech, music, a transcription of an audio file — and the video tasks.
 */
import { ErrorText, Table, useApi } from '@talon/dashboard-kit';
import { ImageForm, MusicForm, SpeechForm, TranscribeForm } from './media-forms.tsx';
import { VideoSection } from './media-video.tsx';
import type { Provider } from './media-parts.tsx';

/** The capability names of GET /api/media/providers, in words. */
const CAN_DO: Record<string, string> = {
  ImageGeneration: 'images',
  TextToSpeech: 'speech',
  VideoGeneration: 'video',
  MusicGeneration: 'music',
  Transcription: 'transcription',
};

export default function MediaView() {
  const list = useApi<{ providers: Provider[] }>('/api/media/providers');
  const providers = list.data?.providers ?? [];
  return (
    <section>
      <h1>Media</h1>
      <p class="muted">Images, speech, music, video and transcription. Every result is a file this service keeps.</p>
      <ErrorText error={list.error} />
      {list.loading && !list.data && <p class="loading">Loading…</p>}
      {list.data && <ProviderTable providers={providers} />}
      <ImageForm providers={providers} />
      <SpeechForm providers={providers} />
      <MusicForm providers={providers} />
      <TranscribeForm providers={providers} />
      <VideoSection providers={providers} />
    </section>
  );
}

function ProviderTable({ providers }: { providers: Provider[] }) {
  if (!providers.length) return <p class="muted">No media provider is loaded.</p>;
  return (
    <section aria-labelledby="media-providers-title">
      <h2 id="media-providers-title">Providers</h2>
      <Table columns={['Provider', 'State', 'Can do', 'To set up']}>
        {providers.map((p) => (
          <tr key={p.name}>
            <th scope="row">{p.name}</th>
            <td>{p.configured ? <span class="badge ok">configured</span> : <span class="badge">not configured</span>}</td>
            <td>{p.capabilities.length ? p.capabilities.map((c) => CAN_DO[c] ?? c).join(', ') : <span class="muted">nothing on this host</span>}</td>
            <td>{p.setup ? <span class="muted">{p.setup}</span> : ''}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
