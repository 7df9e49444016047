/** Hash routes (#/view/param...): no server route per view, and a reload keeps the place. */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  view: string;
  params: string[];
}

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] ?? '', params: parts.slice(1) };
}

export const href = (view: string, ...params: string[]) => `#/${[view, ...params].map(encodeURIComponent).join('/')}`;

export function navigate(view: string, ...params: string[]): void {
  location.hash = href(view, ...params);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
