// The dashboard's service worker (registered by app/src/pwa.ts). It keeps only the offline page and its icon, and
// answers only page loads (navigations): from the network first, so an update is never hidden behind an old
// index.html, and with the offline page when the network fails. API calls, streams and the hashed assets are never
// touched (they go to the network as without a worker; the assets keep their long HTTP cache).
// The service writes the version of the cached files into CACHE's name (services/pwa.ts), so a changed offline page
// installs a new worker.
const CACHE = 'talon-shell-__SHELL_VERSION__';
const SHELL = ['/offline.html', '/icon.svg'];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  if (event.request.mode !== 'navigate') return;
  event.respondWith(fetch(event.request).catch(() => caches.match('/offline.html', { cacheName: CACHE })));
});
