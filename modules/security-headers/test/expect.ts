import assert from 'node:assert/strict';

/** Asserts the module's headers on an answer, given a header lookup (a fetch Response's, or a raw answer's). */
export function assertSecurityHeaders(header: (name: string) => string | null | undefined, cacheControl = 'no-store, no-cache, must-revalidate'): void {
  const csp = header('content-security-policy') ?? '';
  assert.match(csp, /^default-src 'self'; /);
  assert.match(csp, /object-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(header('x-frame-options'), 'DENY');
  assert.equal(header('x-content-type-options'), 'nosniff');
  assert.equal(header('strict-transport-security'), 'max-age=63072000; includeSubDomains');
  assert.equal(header('referrer-policy'), 'strict-origin-when-cross-origin');
  assert.equal(header('cache-control'), cacheControl);
}
