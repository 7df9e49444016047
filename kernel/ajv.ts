import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** An Ajv instance made on first use: each one compiles the JSON Schema meta-schema, which costs start-up time. */
export function lazyAjv(options: Options): () => Ajv {
  let ajv: Ajv | undefined;
  return () => (ajv ??= addFormats(new Ajv(options)));
}
