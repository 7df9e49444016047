import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const instances = new Map<string, Ajv>();

/**
 * One Ajv instance per option set, created on first use: each instance
 * compiles the JSON Schema meta-schema, which costs start-up time.
 */
export function ajvFor(name: 'config' | 'body' | 'params', options: Options): Ajv {
  let ajv = instances.get(name);
  if (!ajv) {
    ajv = addFormats(new Ajv(options));
    instances.set(name, ajv);
  }
  return ajv;
}
