/**
 * The shell: sign-in when the service asks for a key, then the navigation (the running modules' views, lib/views.tsx)
 * and the current view. A 401 from any call returns here to sign-in.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { api, apiKey, ApiError, authMode, onUnauthorized, prefetch, runningModules } from './lib/api.tsx';
import { href, parseHash, useRoute } from './lib/hash.tsx';
import { firstReadsOf, landingOf, openingView, pageViews, viewsOf, type ListedView, type ViewDef, type ViewProps } from './lib/views.tsx';
import { SignIn } from './signin.tsx';
import { ErrorText } from './components/error.tsx';
import { NavBadge } from './components/nav-badge.tsx';
import { ThemeToggle } from './theme.tsx';
import { ModulesContext, RefreshModulesContext } from './lib/modules.tsx';

/**
 * Each view's chunk is fetched once (by its loader, the same for every listing); the current route's starts at
 * once, beside the sign-in probe. A view whose chunk is already there renders at once (no turn to wait for a promise).
 */
type Load = ViewDef['load'];
const loading = new Map<Load, ReturnType<Load>>();
const loaded = new Map<Load, ComponentType<ViewProps>>();
function loadView(load: Load): ReturnType<Load> {
  let p = loading.get(load);
  if (!p) loading.set(load, (p = load().then((m) => (loaded.set(load, m.default), m))));
  return p;
}

type Phase =
  { kind: 'probing' } | { kind: 'signin'; refused: boolean } | { kind: 'in'; modules: Set<string>; views: ViewDef[] } | { kind: 'down'; error: unknown };

interface ModuleList {
  modules: { id: string; state: string }[];
}

export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: 'probing' });

  async function probe(refusedIfDenied: boolean) {
    try {
      const [{ modules }, { views }] = await Promise.all([api<ModuleList>('/api/modules'), api<{ views: ListedView[] }>('/api/dashboard/views')]);
      setPhase({ kind: 'in', modules: new Set(modules.filter((m) => m.state === 'running').map((m) => m.id)), views: viewsOf(views) });
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
    const listed = pageViews();
    const first = openingView(route.view, listed);
    if (first) void loadView(first.load).catch(() => undefined);
    // Without a key to send yet, the reads would only be refused.
    if (first && !(authMode() === 'api_key' && !apiKey.get())) for (const path of firstReadsOf(first, route.params)) prefetch(path);
    // The probe's two reads may both be refused: the first says whether a key was refused, the second keeps that.
    onUnauthorized(() => {
      const hadKey = apiKey.get() !== null;
      apiKey.clear();
      setPhase((p) => (p.kind === 'signin' ? p : { kind: 'signin', refused: hadKey }));
    });
    // The page says whether the API wants a key (or this browser has a session): with no key yet, ask for it
    // without a refused request first. When the API is open to this browser, the page names the running modules and
    // no probe is needed (a 401 later still returns to sign-in).
    const known = runningModules();
    if (authMode() === 'api_key' && !apiKey.get()) setPhase({ kind: 'signin', refused: false });
    else if (authMode() !== 'api_key' && known && listed) setPhase({ kind: 'in', modules: known, views: viewsOf(listed) });
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
            <Shell views={phase.views} onSignOut={apiKey.get() || authMode() === 'session' ? () => void signOut() : undefined} />
          </RefreshModulesContext.Provider>
        </ModulesContext.Provider>
      );
  }
}

function Shell({ views, onSignOut }: { views: ViewDef[]; onSignOut?: () => void }) {
  const route = useRoute();
  const view = views.find((v) => v.id === route.view) ?? landingOf(views);
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = view ? `${view.title} · Talon` : 'Talon';
    setMenuOpen(false);
  }, [view?.id]);
  useScrollReset(route);
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
                      {v.badge && <NavBadge badge={v.badge} title={v.title} />}
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

/**
 * A new route opens at the top of the page, as a new page does: another view, and another page of the same view (an
 * agent from the list, a folder of a workspace, a workflow's editor) alike — kept where it was, the page would open
 * part-way down, or below its end while its data loads. Back and Forward open at the top too: the views read their
 * data again when shown, so a kept position would point into a page not yet filled. A view that shows its sub-route
 * below what stays on the page (a checkpoint under the list of snapshots) brings that part into view itself. The first
 * route is left alone, so a reload keeps the browser's own restoring.
 */
function useScrollReset(route: { view: string; params: string[] }) {
  const key = [route.view, ...route.params].join('/');
  const first = useRef(true);
  useLayoutEffect(() => {
    if (first.current) first.current = false;
    else window.scrollTo(0, 0);
  }, [key]);
}

function LazyView({ def, params }: { def: ViewDef; params: string[] }) {
  const [Comp, setComp] = useState<ComponentType<ViewProps> | null>(() => loaded.get(def.load) ?? null);
  const [error, setError] = useState<unknown>(undefined);
  useLayoutEffect(() => {
    if (Comp) return;
    loadView(def.load).then(
      (m) => setComp(() => m.default),
      (err) => setError(err),
    );
  }, [def]);
  if (error) return <ErrorText error={error} />;
  return Comp ? <Comp params={params} /> : <p class="loading">Loading…</p>;
}
