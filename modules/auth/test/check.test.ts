import { test } from 'node:test';
import assert from 'node:assert/strict';
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
