import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { axeViolations, browserTest, openPage, startEnv, type Env } from './helpers.ts';
import { startIdp, type Idp } from './idp.ts';

const KEY = 'dashboard-test-key-0123456789';
let env: Env | undefined;
let idp: Idp | undefined;
before(async () => {
  if (browserTest.skip) return;
  // The provider must know the service's callback address before the service starts.
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  idp = await startIdp({ client_id: 'talon', client_secret: 'idp-client-secret', redirect_uri: `http://127.0.0.1:${port}/api/auth/callback` });
  process.env.DASHBOARD_OIDC_SECRET = 'idp-client-secret';
  const oidc = ['[oidc]', 'allow_hosts = ["127.0.0.1"]', '[[oidc.providers]]', 'id = "test"', 'display_name = "Test IdP"', `issuer_url = "${idp.issuer}"`];
  oidc.push('client_id = "talon"', 'client_secret_env = "DASHBOARD_OIDC_SECRET"');
  env = await startEnv([`api_listen = "127.0.0.1:${port}"`, `api_key = "${KEY}"`, ...oidc].join('\n'), ['oidc']);
});
after(async () => {
  await env?.stop();
  await idp?.stop();
});

test('with an api_key: the app loads without console errors, asks for the key and refuses a wrong one', browserTest, async () => {
  const { page, problems } = await openPage(env!);
  await page.getByLabel('API key').waitFor();
  assert.deepEqual(await axeViolations(page), [], 'sign-in screen: no serious accessibility violations');
  await page.getByLabel('API key').fill('wrong-key-0123456789');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That key was refused').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), null, 'a refused key is not kept');
  // The refusal is a 401 the browser reports as a failed resource; nothing else went wrong.
  assert.deepEqual(
    problems.filter((p) => !/401/.test(p)),
    [],
  );
});

test('the right key signs in; it is kept for the tab only and never put in a URL', browserTest, async () => {
  const { page, problems } = await openPage(env!);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), KEY);
  assert.equal(await page.evaluate(() => localStorage.getItem('talon.api_key')), null);
  assert.ok(!page.url().includes(KEY));
  for (const title of ['Chat', 'Agents', 'Models & providers', 'Memory', 'Usage & budgets', 'Live logs', 'Security', 'Configuration', 'Modules']) {
    assert.ok(await page.getByRole('link', { name: title, exact: true }).isVisible(), `${title} is listed`);
  }
  assert.deepEqual(problems, []);
});

test('a 401 at any point returns to sign-in', browserTest, async () => {
  const { page } = await openPage(env!);
  await page.evaluate((k) => sessionStorage.setItem('talon.api_key', k), KEY);
  await page.reload();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  // The key stops being valid (rotated on the server, say): the next call answers 401.
  await page.evaluate(() => sessionStorage.setItem('talon.api_key', 'rotated-away-0123456789'));
  await page.evaluate(() => (location.hash = '#/modules'));
  await page.getByLabel('API key').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), null);
});

test('single sign-on: the provider button leads through the provider and back in with a session cookie; sign out ends it', browserTest, async () => {
  const { page, problems } = await openPage(env!);
  // The provider's pages ask for a web font: the browser stays off the network.
  await page.context().route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  // The provider's own pages: its login form, then its consent.
  await page.locator('input[name=login]').fill('alice@example.com');
  await page.locator('input[name=password]').fill('anything');
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]', { hasText: /continue/i }).click();
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  assert.equal(new URL(page.url()).origin, env!.k.url);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('talon.api_key')), null, 'no key: the cookie signs the calls');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'talon_session');
  assert.equal(cookie?.httpOnly, true);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key').waitFor();
  await page.reload();
  await page.getByLabel('API key').waitFor();
  assert.deepEqual(
    problems.filter((p) => !p.includes('https://fonts.googleapis.com/')),
    [],
  );
});
