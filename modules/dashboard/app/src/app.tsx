/**
 * The shell: sign-in when the service asks for a key, then the navigation (built from the view registry and the
 * running modules) and the current view. A 401 from any call returns here to sign-in.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { api, apiKey, ApiError, onUnauthorized } from './lib/api.tsx';
import { href, parseHash, useRoute } from './lib/hash.tsx';
import { VIEWS, type ViewDef, type ViewProps } from './views/index.tsx';
import { SignIn } from './signin.tsx';
import { ErrorText } from './components/error.tsx';
import { ThemeToggle } from './theme.tsx';
import { ModulesContext } from './lib/modules.tsx';

/** Each view's chunk is fetched once; the current route's starts at once, beside the sign-in probe. */
const loading = new Map<ViewDef, ReturnType<ViewDef['load']>>();
function loadView(def: ViewDef): ReturnType<ViewDef['load']> {
  let p = loading.get(def);
  if (!p) loading.set(def, (p = def.load()));
  return p;
}

type Phase = { kind: 'probing' } | { kind: 'signin'; refused: boolean } | { kind: 'in'; modules: Set<string> } | { kind: 'down'; error: unknown };

interface ModuleList {
  modules: { id: string; state: string }[];
}

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: 'probing' });

  async function probe(refusedIfDenied: boolean) {
    try {
      const { modules } = await api<ModuleList>('/api/modules');
      setPhase({ kind: 'in', modules: new Set(modules.filter((m) => m.state === 'running').map((m) => m.id)) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        apiKey.clear();
        setPhase({ kind: 'signin', refused: refusedIfDenied });
      } else setPhase({ kind: 'down', error: err });
    }
  }

  const signOut = () => {
    apiKey.clear();
    setPhase({ kind: 'signin', refused: false });
  };

  useEffect(() => {
    const first = VIEWS.find((v) => v.id === parseHash(location.hash).view) ?? VIEWS[0];
    if (first) void loadView(first).catch(() => undefined);
    onUnauthorized(() => {
      const hadKey = apiKey.get() !== null;
      apiKey.clear();
      setPhase({ kind: 'signin', refused: hadKey });
    });
    // The page says whether the API wants a key: with no key yet, ask for it without a refused request first.
    const mode = document.querySelector<HTMLMetaElement>('meta[name="talon-auth"]')?.content;
    if (mode === 'api_key' && !apiKey.get()) setPhase({ kind: 'signin', refused: false });
    else void probe(false);
  }, []);

  switch (phase.kind) {
    case 'probing':
      return <p class="loading">Loading…</p>;
    case 'down':
      return (
        <main class="signin">
          <ErrorText error={phase.error} />
          <button type="button" onClick={() => void probe(false)}>
            Try again
          </button>
        </main>
      );
    case 'signin':
      return (
        <SignIn
          refused={phase.refused}
          onKey={(key) => {
            apiKey.set(key);
            void probe(true);
          }}
        />
      );
    case 'in':
      return (
        <ModulesContext.Provider value={phase.modules}>
          <Shell views={VIEWS.filter((v) => v.requires.every((m) => phase.modules.has(m)))} onSignOut={apiKey.get() ? signOut : undefined} />
        </ModulesContext.Provider>
      );
  }
}

function Shell({ views, onSignOut }: { views: ViewDef[]; onSignOut?: () => void }) {
  const route = useRoute();
  const view = views.find((v) => v.id === route.view) ?? views[0];
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = view ? `${view.title} · Talon` : 'Talon';
    setMenuOpen(false);
  }, [view?.id]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span class="brand">Talon</span>
        <span class="spacer" />
        <ThemeToggle />
        {onSignOut && (
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <nav id="nav" class={menuOpen ? 'nav open' : 'nav'} aria-label="Views">
        <ul>
          {views.map((v) => (
            <li>
              <a href={href(v.id)} aria-current={v === view ? 'page' : undefined}>
                {v.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {view ? <LazyView key={view.id} def={view} params={route.params} /> : <p>No module with a view is running.</p>}
      </main>
    </div>
  );
}

function LazyView({ def, params }: { def: ViewDef; params: string[] }) {
  const [Comp, setComp] = useState<ComponentType<ViewProps> | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    loadView(def).then(
      (m) => setComp(() => m.default),
      (err) => setError(err),
    );
  }, [def]);
  if (error) return <ErrorText error={error} />;
  return Comp ? <Comp params={params} /> : <p class="loading">Loading…</p>;
}
