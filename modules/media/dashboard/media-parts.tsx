/**
 * Pieces the media view shares: a generated file fetched with the API key (an <img>, <audio> or <video> cannot send
 * the Authorization header, and /api/uploads is under the API's auth) and shown through a blob: URL, the provider
 * picker for one capability, and form helpers.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorText, request } from '@talon/dashboard-kit';

export interface Provider {
  name: string;
  configured: boolean;
  capabilities: string[];
  setup?: string;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A blob: URL of a file under /api/uploads, revoked when the component goes or the file changes. */
function useBlobUrl(url: string): { src?: string; error?: unknown } {
  const [state, setState] = useState<{ src?: string; error?: unknown }>({});
  useEffect(() => {
    let src: string | undefined;
    let gone = false;
    setState({});
    request(url)
      .then((res) => res.blob())
      .then((blob) => {
        src = URL.createObjectURL(blob);
        if (gone) URL.revokeObjectURL(src);
        else setState({ src });
      })
      .catch((error: unknown) => !gone && setState({ error }));
    return () => {
      gone = true;
      if (src) URL.revokeObjectURL(src);
    };
  }, [url]);
  return state;
}

/** A generated image, audio or video file, shown or played in the page. */
export function MediaFile({ url, kind, label }: { url: string; kind: 'image' | 'audio' | 'video'; label: string }) {
  const { src, error } = useBlobUrl(url);
  if (error) return <ErrorText error={error} />;
  if (!src) return <p class="muted">Loading {label.toLowerCase()}…</p>;
  if (kind === 'image') return <img class="media-result" src={src} alt={label} />;
  if (kind === 'audio') return <audio class="media-result" controls src={src} aria-label={label} />;
  return <video class="media-result" controls src={src} aria-label={label} />;
}

/**
 * Providers offering a capability; '' = let the service choose (the first configured one in provider_order). When
 * none is configured the form stays usable (the service's 422 says what to set) and a line says so first.
 */
export function ProviderSelect({
  id,
  providers,
  capability,
  value,
  onChange,
}: {
  id: string;
  providers: Provider[];
  capability: string;
  value: string;
  onChange: (name: string) => void;
}) {
  const offering = providers.filter((p) => p.capabilities.includes(capability));
  return (
    <div class="field">
      <label for={id}>Provider</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">automatic</option>
        {offering.map((p) => (
          <option key={p.name} value={p.name} disabled={!p.configured}>
            {p.name}
            {p.configured ? '' : ' (not configured)'}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A form of one kind, in a card, saying first when no configured provider can do it (the form stays usable: the 422 says what to set). */
export function MediaCard({
  title,
  label,
  providers,
  capability,
  onSubmit,
  children,
}: {
  title: string;
  label: string;
  providers: Provider[];
  capability: string;
  onSubmit: (e: Event) => void;
  children: ComponentChildren;
}) {
  return (
    <form class="card media-form" aria-label={label} onSubmit={onSubmit}>
      <h2>{title}</h2>
      <NoProvider providers={providers} capability={capability} />
      {children}
    </form>
  );
}

function NoProvider({ providers, capability }: { providers: Provider[]; capability: string }) {
  const offering = providers.filter((p) => p.capabilities.includes(capability));
  // Not loaded yet, or one is ready: nothing to say.
  if (!providers.length || offering.some((p) => p.configured)) return null;
  if (!offering.length) return <p class="muted">No provider here can do this.</p>;
  return <p class="muted">Not configured yet: {offering.map((p) => p.name).join(', ')} (see "To set up" above).</p>;
}

/** The chosen provider as a body field: none = the service chooses. */
export const chosen = (provider: string) => (provider ? { provider } : {});

/** The fields of a form as strings, the empty ones left out. */
export function formFields(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new FormData(form)) if (typeof value === 'string' && value.trim() !== '') out[key] = value.trim();
  return out;
}

/** An onSubmit handler that runs `fn` with the submitted form as the action (the page is not reloaded). */
export function onSubmitForm(action: { run(fn: () => Promise<string | void>): Promise<boolean> }, fn: (form: HTMLFormElement) => Promise<void>) {
  return (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void action.run(() => fn(form));
  };
}
