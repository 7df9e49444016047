/**
 * The sign-in screen: the api_key, kept for this browser tab only; with single sign-on configured, a button per
 * identity provider (the provider sends the browser back with the dashboard's session cookie).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, oidcOffered } from './lib/api.tsx';

interface Providers {
  enabled: boolean;
  providers: { id: string; display_name: string; login_url: string }[];
}

function SingleSignOn() {
  const [providers, setProviders] = useState<Providers['providers']>([]);
  useEffect(() => {
    if (oidcOffered())
      void api<Providers>('/api/auth/providers').then(
        (p) => setProviders(p.providers),
        () => undefined,
      );
  }, []);
  if (!providers.length) return null;
  return (
    <div class="sso">
      <p>Or sign in with your account:</p>
      {providers.map((p) => (
        <a class="button" href={p.login_url}>
          Sign in with {p.display_name}
        </a>
      ))}
    </div>
  );
}

export function SignIn({ onKey, refused }: { onKey: (key: string) => void; refused: boolean }) {
  const [key, setKey] = useState('');
  return (
    <main class="signin">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) onKey(key.trim());
        }}
      >
        <h1>Talon</h1>
        <p>
          This service asks for its API key (the <code>api_key</code> of its config.toml).
        </p>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="current-password" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        {refused && (
          <p class="error" role="alert">
            That key was refused. Check it and try again.
          </p>
        )}
        <button type="submit" class="primary">
          Sign in
        </button>
        <p class="muted">The key is kept in this tab only (sessionStorage) and sent as a bearer token, never in a URL.</p>
        <SingleSignOn />
      </form>
    </main>
  );
}
