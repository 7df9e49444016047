import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOrigin } from '../services/origins.ts';

const open = { keyRequired: false, cors_origins: ['https://app.example', '*'] };
const keyed = { keyRequired: true, cors_origins: ['https://app.example/'] };

test('localhost origins on any port are always allowed', () => {
  for (const o of ['http://localhost', 'http://localhost:5173', 'https://127.0.0.1:8443', 'http://[::1]:3000', 'HTTP://LOCALHOST:1']) {
    assert.equal(decideOrigin(o, open, undefined), 'allow', o);
    assert.equal(decideOrigin(o, keyed, undefined), 'allow', o);
  }
});

test('look-alikes of localhost are not', () => {
  for (const o of ['http://localhost.evil.example', 'http://127.0.0.1.evil.example', 'http://evil.example/localhost', 'null', 'file://']) {
    assert.equal(decideOrigin(o, keyed, undefined), 'deny', o);
  }
});

test('without a key cors_origins is ignored (the API is open)', () => {
  assert.equal(decideOrigin('https://app.example', open, undefined), 'deny');
  assert.equal(decideOrigin('https://any.example', open, undefined), 'deny');
});

test('with a key, exact origins from cors_origins (a trailing slash in the list is tolerated)', () => {
  assert.equal(decideOrigin('https://app.example', keyed, undefined), 'allow');
  assert.equal(decideOrigin('http://app.example', keyed, undefined), 'deny');
  assert.equal(decideOrigin('https://app.example:8443', keyed, undefined), 'deny');
  assert.equal(decideOrigin('https://sub.app.example', keyed, undefined), 'deny');
  assert.equal(decideOrigin('https://x.example', { keyRequired: true, cors_origins: ['*'] }, undefined), 'any');
});

test('with a key, the origin the page was served from is allowed', () => {
  assert.equal(decideOrigin('http://talon.lan:4545', keyed, 'talon.lan:4545'), 'allow');
  assert.equal(decideOrigin('http://other.lan:4545', keyed, 'talon.lan:4545'), 'deny');
});

test('without a key a matching Host proves nothing (DNS rebinding names itself in both)', () => {
  assert.equal(decideOrigin('http://rebound.example:4545', open, 'rebound.example:4545'), 'deny');
});
