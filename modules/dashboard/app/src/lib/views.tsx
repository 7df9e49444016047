/**
 * The views: the modules bring them (modules/<name>/dashboard/, declared in their module.toml), the build holds their
 * code (`virtual:talon-views`, one lazy chunk each: app/vite.config.mjs), and the service says which the running
 * modules offer (GET /api/dashboard/views, or the page's talon-views meta tag when the API is open to this browser).
 * The shell lists only what both know, so a module's views go with it.
 */
import type { ComponentType } from 'preact';
import built from 'virtual:talon-views';

export interface ViewProps {
  /** The route's parameters after the view's name: #/chat/<agent id> gives ['<agent id>']. */
  params: string[];
}

/** A view the build holds. */
export interface BuiltView {
  module: string;
  id: string;
  order: number;
  /** A visit without a route opens on it (the lowest order among those declaring it; else the first view). */
  landing: boolean;
  /** What the view reads first, by exact path: fetched beside the sign-in probe when the visit opens on it. */
  firstReads: string[];
  /** Likewise with a route parameter; `{param}` is the first, URI-encoded. */
  firstReadsWithParam: string[];
  load: () => Promise<{ default: ComponentType<ViewProps> }>;
}

/** A view of a running module, as the service lists it (modules/dashboard/services/views.ts). */
export interface ListedView {
  module: string;
  id: string;
  title: string;
  group: string;
  order: number;
  /** A count beside the name in the navigation (components/nav-badge.tsx). */
  badge?: { path: string; field: string };
}

export type ViewDef = ListedView & Pick<BuiltView, 'load' | 'landing'>;

const key = (v: { module: string; id: string }) => `${v.module}/${v.id}`;
const byKey = new Map(built.map((v) => [key(v), v]));

/** The listed views this build holds, in navigation order. */
export function viewsOf(listed: readonly ListedView[]): ViewDef[] {
  return listed.flatMap((v) => {
    const b = byKey.get(key(v));
    return b ? [{ ...v, load: b.load, landing: b.landing }] : [];
  });
}

/**
 * The view a visit opens on, as soon as the page runs: the route's, else the landing view, else the first by order;
 * among the views the page listed when it did (else among all built, before sign-in says which run).
 */
export function openingView(id: string, listed: readonly ListedView[] | undefined): BuiltView | undefined {
  const offered = listed ? built.filter((b) => listed.some((v) => key(v) === key(b))) : built;
  return offered.find((v) => v.id === id) ?? landingOf([...offered].sort((a, b) => a.order - b.order));
}

/** Of views in navigation order, the one a visit without a route opens on. */
export function landingOf<V extends { landing: boolean }>(views: readonly V[]): V | undefined {
  return views.find((v) => v.landing) ?? views[0];
}

export function firstReadsOf(view: BuiltView, params: string[]): string[] {
  const [param] = params;
  return param === undefined ? view.firstReads : view.firstReadsWithParam.map((p) => p.replaceAll('{param}', encodeURIComponent(param)));
}

/** The views the page listed (when the API is open to this browser), else undefined. */
export function pageViews(): ListedView[] | undefined {
  const named = document.querySelector<HTMLMetaElement>('meta[name="talon-views"]')?.content;
  return named === undefined ? undefined : (JSON.parse(named) as ListedView[]);
}
