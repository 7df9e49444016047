/**
 * The shell: sign-in when the service asks for a key, then the navigation (built from the view registry and the
 * running modules) and the current view. A 401 from any call returns here to sign-in.
 */
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { api, apiKey, ApiError, authMode, onUnauthorized, prefetch, runningModules } from './lib/api.tsx';
import { href, parseHash, useRoute } from './lib/hash.tsx';
import { VIEWS, type ViewDef, type ViewProps } from './views/index.tsx';
import { SignIn } from './signin.tsx';
import { ErrorText } from './components/error.tsx';
import { ThemeToggle } from './theme.tsx';
import { ModulesContext, RefreshModulesContext } from './lib/modules.tsx';

/**
 * Each view's chunk is fetched once; the current route's starts at once, beside the sign-in probe. A view whose
 * chunk is already there renders at once (no extra turn to wait for a promise).
 */
const loading = new Map<ViewDef, ReturnType<ViewDef['load']>>();
const loaded = new Map<ViewDef, ComponentType<ViewProps>>();
function loadView(def: ViewDef): ReturnType<ViewDef['load']> {
  let p = loading.get(def);
  if (!p) loading.set(def, (p = def.load().then((m) => (loaded.set(def, m.default), m))));
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

  // A key is forgotten; a single sign-on session is ended at the service (its cookie is HttpOnly).
  const signOut = async () => {
    if (!apiKey.get()) await api('/auth/logout', { method: 'POST' }).catch(() => undefined);
    apiKey.clear();
    setPhase({ kind: 'signin', refused: false });
  };

  // A layout effect: the probe and the first reads go out as the app mounts, not a frame later.
  useLayoutEffect(() => {
    const route = parseHash(location.hash);
    const first = VIEWS.find((v) => v.id === route.view) ?? VIEWS[0];
    if (first) void loadView(first).catch(() => undefined);
    // Without a key to send yet, the reads would only be refused.
    if (first?.firstReads && !(authMode() === 'api_key' && !apiKey.get())) for (const path of first.firstReads(route.params)) prefetch(path);
    onUnauthorized(() => {
      const hadKey = apiKey.get() !== null;
      apiKey.clear();
      setPhase({ kind: 'signin', refused: hadKey });
    });
    // The page says whether the API wants a key (or this browser has a session): with no key yet, ask for it
    // without a refused request first. When the API is open to this browser, the page names the running modules and
    // no probe is needed (a 401 later still returns to sign-in).
    const known = runningModules();
    if (authMode() === 'api_key' && !apiKey.get()) setPhase({ kind: 'signin', refused: false });
    else if (authMode() !== 'api_key' && known) setPhase({ kind: 'in', modules: known });
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
          <RefreshModulesContext.Provider value={() => void probe(false)}>
            <Shell
              views={VIEWS.filter((v) => v.requires.every((m) => phase.modules.has(m)))}
              onSignOut={apiKey.get() || authMode() === 'session' ? () => void signOut() : undefined}
            />
          </RefreshModulesContext.Provider>
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
        {[...new Set(views.map((v) => v.group))].map((group) => (
          <>
            <h2>{group}</h2>
            <ul>
              {views
                .filter((v) => v.group === group)
                .map((v) => (
                  <li>
                    <a href={href(v.id)} aria-current={v === view ? 'page' : undefined}>
                      {v.title}
                    </a>
                  </li>
                ))}
            </ul>
          </>
        ))}
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {view ? <LazyView key={view.id} def={view} params={route.params} /> : <p>No module with a view is running.</p>}
      </main>
    </div>
  );
}

function LazyView({ def, params }: { def: ViewDef; params: string[] }) {
  const [Comp, setComp] = useState<ComponentType<ViewProps> | null>(() => loaded.get(def) ?? null);
  const [error, setError] = useState<unknown>(undefined);
  useLayoutEffect(() => {
    if (Comp) return;
    loadView(def).then(
      (m) => setComp(() => m.default),
      (err) => setError(err),
    );
  }, [def]);
  if (error) return <ErrorText error={error} />;
  return Comp ? <Comp params={params} /> : <p class="loading">Loading…</p>;
}
