import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keylessRefusal } from '../services/network.ts';
import { bearerToken, sameKey, verdict, MISSING, INVALID } from '../services/check.ts';

test('bearer token parsing', () => {
  assert.equal(bearerToken('Bearer abc'), 'abc');
  assert.equal(bearerToken('bearer abc'), 'abc');
  assert.equal(bearerToken('Bearer   abc  '), 'abc');
  assert.equal(bearerToken('Basic abc'), undefined);
  assert.equal(bearerToken('Bearer'), undefined);
  assert.equal(bearerToken('Bearer a b'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

test('key comparison: equal, different content, different lengths', () => {
  assert.equal(sameKey('s3cret', 's3cret'), true);
  assert.equal(sameKey('s3creT', 's3cret'), false);
  assert.equal(sameKey('s3cret-longer', 's3cret'), false);
  assert.equal(sameKey('', 's3cret'), false);
});

test('verdicts', () => {
  assert.equal(verdict('Bearer s3cret', 's3cret'), undefined);
  assert.equal(verdict(undefined, 's3cret'), MISSING);
  assert.equal(verdict('Token s3cret', 's3cret'), MISSING);
  assert.equal(verdict('Bearer nope', 's3cret'), INVALID);
});

test('loopback addresses are told apart from the network', () => {
  for (const ip of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) assert.equal(keylessRefusal(ip, {}), undefined, ip);
  for (const ip of ['10.0.0.5', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '203.0.113.7'])
    assert.match(keylessRefusal(ip, {})!, /only clients on this machine/, ip);
});
