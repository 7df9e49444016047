/**
 * The defaults of a key the file does not set are filled without compiling a validator (kernel/config/validate.ts):
 * they must be exactly what Ajv's useDefaults gives, for the shapes it follows and for every built-in module's schema.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonSchema } from '@talon/module-sdk';
import { startTestKernel } from '@talon/testing';
import { fillable, fillDefaults, validateSection } from '../kernel/config/validate.ts';

const viaAjv = (schema: JsonSchema) => validateSection(schema, {}, { errors: [], warnings: [] });
const wrap = (key: string, schema: unknown) => ({ type: 'object', properties: { [key]: schema } }) as JsonSchema;

const shapes: Record<string, JsonSchema> = {
  'flat defaults, a key without one': { type: 'object', properties: { a: { type: 'number', default: 3 }, b: { type: 'string' } } },
  'a default object whose own properties have defaults': {
    type: 'object',
    properties: { t: { type: 'object', default: { x: 1 }, properties: { x: { type: 'number' }, y: { type: 'string', default: 'why' } } } },
  },
  'a nested table without a default of its own': { type: 'object', properties: { t: { type: 'object', properties: { y: { default: true } } } } },
  'a default array whose items get defaults': {
    type: 'object',
    properties: { list: { type: 'array', default: [{}, { n: 2 }], items: { type: 'object', properties: { n: { type: 'number', default: 1 } } } } },
  },
  'a default map whose entries get defaults (additionalProperties)': {
    type: 'object',
    properties: { map: { type: 'object', default: { one: {} }, additionalProperties: { type: 'object', properties: { on: { default: false } } } } },
  },
  'defaults under anyOf and not are not applied': {
    type: 'object',
    properties: { c: { anyOf: [{ type: 'object', properties: { z: { default: 1 } } }, { type: 'string' }], default: {} }, d: { not: { default: 1 } } },
  },
  'null is a value, not a missing key': {
    type: 'object',
    properties: { n: { default: null }, m: { type: 'object', default: { k: null }, properties: { k: { default: 1 } } } },
  },
  'a property named like an object method': { type: 'object', properties: { constructor: { default: 'kept' } }, additionalProperties: { default: 1 } },
};

test('fillDefaults gives what Ajv useDefaults gives, shape by shape', () => {
  for (const [name, schema] of Object.entries(shapes)) {
    assert.ok(fillable(schema), name);
    assert.deepEqual(fillDefaults(schema, {}), viaAjv(schema), name);
    assert.deepEqual(fillDefaults(wrap('k', schema), {}), viaAjv(wrap('k', schema)), `${name} (as a key)`);
  }
});

test('a default is a copy: filling twice never shares an object', () => {
  const schema = shapes['a default object whose own properties have defaults'];
  const first = fillDefaults(schema, {}) as { t: { y?: string } };
  first.t.y = 'changed';
  assert.equal((fillDefaults(schema, {}) as { t: { y: string } }).t.y, 'why');
});

test('shapes it does not follow go to Ajv', () => {
  assert.equal(fillable({ type: 'object', properties: { a: { allOf: [{ default: 1 }] } } }), false);
  assert.equal(fillable({ type: 'object', properties: { a: { $ref: '#/definitions/x' } } }), false);
  assert.equal(fillable({ type: 'array', items: [{ default: 1 }] }), false);
  assert.equal(fillable({ type: 'object', patternProperties: { '^x': { default: 1 } } }), false);
});

test('every built-in module: the defaults without Ajv equal those with Ajv', async () => {
  const k = await startTestKernel({});
  try {
    const properties = (k.kernel.config.schema() as { properties: Record<string, { type?: string }> }).properties;
    let compared = 0;
    for (const [key, schema] of Object.entries(properties)) {
      if (!fillable(schema as JsonSchema)) continue;
      assert.deepEqual(fillDefaults(wrap(key, schema), {}), viaAjv(wrap(key, schema)), key);
      if (schema.type === 'object') assert.deepEqual(fillDefaults(schema as JsonSchema, {}), viaAjv(schema as JsonSchema), `[${key}]`);
      compared++;
    }
    assert.ok(compared > 40, `compared ${compared} schemas`);
  } finally {
    await k.stop();
  }
});
