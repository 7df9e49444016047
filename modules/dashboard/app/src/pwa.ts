/**
 * The installable app's page side. The service worker (app/pwa/sw.js, served at /sw.js) is registered once the page
 * has loaded and the browser is idle, so it never competes with the chat's first load; only in a secure context
 * (https, or loopback), where browsers allow one. On a phone the keyboard shrinks the visual viewport: its height goes
 * to `--app-height`, which the phone layout sizes the chat by (styles.css), so the composer stays above the keyboard
 * where `dvh` does not follow it.
 */
export function startPwa(): void {
  if ('serviceWorker' in navigator && window.isSecureContext) {
    const register = () => void navigator.serviceWorker.register('/sw.js').catch(() => undefined);
    const idle = () => ('requestIdleCallback' in window ? requestIdleCallback(register, { timeout: 5000 }) : setTimeout(register, 1000));
    if (document.readyState === 'complete') idle();
    else addEventListener('load', idle, { once: true });
  }
  const viewport = window.visualViewport;
  if (viewport) {
    // Not while pinch-zoomed: the layout follows the keyboard, not the zoom.
    const follow = () => viewport.scale === 1 && document.documentElement.style.setProperty('--app-height', `${viewport.height}px`);
    viewport.addEventListener('resize', follow);
    follow();
  }
}
