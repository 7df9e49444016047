import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startTestKernel, type TestKernel } from '@talon/testing';
import type { DashboardSessions } from '@talon/oidc';
import { startIdp, throughProvider, type Idp } from './idp.ts';

const API_KEY = 'admin-key-for-oidc-tests-123';
const json = async <T = Record<string, unknown>>(res: Response) => (await res.json()) as T;

describe('oidc: dashboard sign-in against a real provider', () => {
  let k: TestKernel;
  let idp: Idp;
  let sessions: DashboardSessions;
  before(async () => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/api/auth/callback`;
    idp = await startIdp({ client_id: 'talon', client_secret: 'idp-client-secret', redirect_uri: redirect });
    process.env.OIDC_TEST_SECRET = 'idp-client-secret';
    k = await startTestKernel({
      only: ['oidc', 'auth', 'error-envelope'],
      config: [
        `api_listen = "127.0.0.1:${port}"`,
        `api_key = "${API_KEY}"`,
        '[oidc]',
        'allow_hosts = ["127.0.0.1"]',
        'session_ttl_secs = 3600',
        '[[oidc.providers]]',
        'id = "test"',
        'display_name = "Test IdP"',
        `issuer_url = "${idp.issuer}"`,
        'client_id = "talon"',
        'client_secret_env = "OIDC_TEST_SECRET"',
        'allowed_domains = ["example.com"]',
        '[[oidc.providers]]',
        'id = "ghost"',
        'issuer_url = "http://127.0.0.1:9/"',
        'client_id = "x"',
      ].join('\n'),
    });
    sessions = k.kernel.services.view<DashboardSessions>('oidc.sessions');
  });
  after(async () => {
    await k.stop();
    await idp.stop();
  });

  /** Login → provider → callback; returns the callback's answer. */
  async function signIn(path = '/api/auth/login/test', accept?: string): Promise<Response> {
    const login = await k.request(path, { redirect: 'manual' });
    assert.equal(login.status, 302);
    const authorize = new URL(login.headers.get('location')!);
    assert.equal(authorize.origin, idp.issuer);
    for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(authorize.searchParams.get(p), p);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    const back = await throughProvider(authorize.href, idp.issuer);
    return k.request(back.pathname + back.search, { redirect: 'manual', ...(accept ? { headers: { accept } } : {}) });
  }

  const cookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0];

  test('providers are listed without a key', async () => {
    const res = await json<{ enabled: boolean; providers: Array<{ id: string; display_name: string }> }>(await k.request('/api/auth/providers'));
    assert.equal(res.enabled, true);
    assert.deepEqual(
      res.providers.map((p) => [p.id, p.display_name]),
      [
        ['test', 'Test IdP'],
        ['ghost', 'ghost'],
      ],
    );
  });

  test('sign-in sets an HttpOnly session cookie that the auth service can recognise; logout clears it', async () => {
    const res = await signIn();
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/');
    const setCookie = res.headers.get('set-cookie')!;
    assert.match(setCookie, /^talon_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=3600$/);
    const cookie = cookieOf(res);
    const principal = sessions.authenticate({ cookie });
    assert.equal(principal?.subject, 'oidc:test:alice');
    assert.equal(principal?.email, 'alice@example.com');
    const info = await json(await k.request('/api/auth/userinfo', { headers: { cookie, authorization: `Bearer ${API_KEY}` } }));
    assert.equal(info.auth_method, 'oidc');
    assert.equal(info.sub, 'alice');
    assert.equal(info.name, 'Alice');
    assert.equal(info.source, 'provider', 'read from the userinfo endpoint');
    // The cookie alone authenticates the dashboard's API calls (api_key is set); a change must come from this origin.
    assert.equal((await k.request('/api/auth/userinfo', { headers: { cookie } })).status, 200);
    const change = (headers: Record<string, string>) =>
      k.request('/api/auth/introspect', { method: 'POST', headers: { cookie, ...headers }, json: { token: 'x' } });
    assert.equal((await change({ origin: k.url })).status, 200);
    assert.equal((await change({ origin: 'https://evil.example' })).status, 403);
    const out = await k.request('/auth/logout', { method: 'POST', headers: { cookie } });
    assert.deepEqual(await json(out), { ok: true, signed_out: true });
    assert.match(out.headers.get('set-cookie')!, /^talon_session=; .*Max-Age=0/);
    assert.equal(sessions.authenticate({ cookie }), undefined);
    assert.equal((await k.request('/api/auth/userinfo', { headers: { cookie } })).status, 401, 'the session ended with the logout');
  });

  test('the default provider login, the JSON callback answer, and introspection of the IdP token and the session', async () => {
    const res = await signIn('/api/auth/login', 'application/json');
    assert.equal(res.status, 200);
    const body = await json<{ ok: boolean; provider: string; user: { email: string } }>(res);
    assert.deepEqual([body.ok, body.provider, body.user.email], [true, 'test', 'alice@example.com']);
    const cookie = cookieOf(res);
    const auth = { authorization: `Bearer ${API_KEY}` };
    const session = await json(await k.request('/api/auth/introspect', { method: 'POST', headers: auth, json: { token: cookie.split('=')[1] } }));
    assert.equal(session.active, true);
    assert.equal(session.token_type, 'session');
    const bogus = await json(await k.request('/api/auth/introspect', { method: 'POST', headers: auth, json: { token: 'not-a-token', provider: 'test' } }));
    assert.equal(bogus.active, false);
    assert.equal((await k.request('/api/auth/introspect', { method: 'POST', headers: auth, json: {} })).status, 400);
    assert.equal((await k.request('/api/auth/introspect', { method: 'POST', headers: auth, json: { token: 'x', provider: 'nope' } })).status, 404);
  });

  test('an account outside allowed_domains is refused (403) and gets no cookie', async () => {
    idp.account = { id: 'mallory', email: 'mallory@evil.test', email_verified: true, name: 'M' };
    try {
      const res = await signIn();
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('set-cookie'), null);
    } finally {
      idp.account = { id: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice' };
    }
  });

  test('callback errors: provider error 401, missing or unknown state 400 (also as a form post)', async () => {
    assert.equal((await k.request('/api/auth/callback?error=access_denied&state=x')).status, 401);
    assert.equal((await k.request('/api/auth/callback')).status, 400);
    assert.equal((await k.request('/api/auth/callback?code=abc&state=forged')).status, 400);
    const form = await k.request('/api/auth/callback', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'code=abc&state=forged',
    });
    assert.equal(form.status, 400);
    assert.match((await json<{ error: string }>(form)).error, /unknown or expired sign-in state/);
  });

  test('login errors: unknown provider 404, unreachable provider 502', async () => {
    assert.equal((await k.request('/api/auth/login/nope', { redirect: 'manual' })).status, 404);
    assert.equal((await k.request('/api/auth/login/ghost', { redirect: 'manual' })).status, 502);
    assert.equal((await k.request('/api/auth/userinfo')).status, 401);
  });
});

describe('oidc: not configured', () => {
  test('no providers: listed as disabled, login answers 404', async () => {
    const k = await startTestKernel({ only: ['oidc', 'error-envelope'] });
    try {
      assert.deepEqual(await json(await k.request('/api/auth/providers')), { enabled: false, providers: [] });
      const res = await k.request('/api/auth/login', { redirect: 'manual' });
      assert.equal(res.status, 404);
      assert.match((await json<{ error: string }>(res)).error, /\[oidc\] providers/);
      assert.deepEqual(await json(await k.request('/api/auth/logout', { method: 'POST' })), { ok: true, signed_out: false });
    } finally {
      await k.stop();
    }
  });
});
