import slugify from 'slugify';
import { badRequest, conflict, type Store } from '@talon/module-sdk';
import type { SlugConfig } from '../config.ts';

export interface SlugRecord {
  slug: string;
  title: string;
  created_at: string;
}

/** Enough to find a free slug for any realistic run of equal titles, and a bound on a pathological one. */
const MAX_SUFFIX = 1000;

/** Cut to length without leaving a separator dangling at the end ('hello-' + '-2' would read 'hello--2'). */
function fit(slug: string, length: number, separator: string): string {
  let cut = slug.slice(0, length);
  while (cut.endsWith(separator)) cut = cut.slice(0, -1);
  return cut;
}

/** Makes slugs with the configured separator and length, and reserves unique ones (table slug_slugs). */
export class Slugs {
  constructor(
    private readonly store: Store,
    /** Read on each call: a changed [slug] section applies to the next slug without a reload. */
    private readonly config: () => SlugConfig,
  ) {}

  make(text: string): string {
    const { separator, max_length } = this.config();
    // strict drops what is not a letter, digit or separator; slugify transliterates accents and symbols first.
    const slug = fit(slugify(text, { replacement: separator, lower: true, strict: true, trim: true }), max_length, separator);
    if (!slug) throw badRequest(`'${text}' has no letters or digits to make a slug of`);
    return slug;
  }

  /** Reserves the title's slug, or the first free `<slug>-2`, `<slug>-3`, ... when it is taken. */
  async reserve(title: string): Promise<SlugRecord> {
    const base = this.make(title);
    const { separator, max_length } = this.config();
    const createdAt = new Date().toISOString();
    for (let n = 1; n <= MAX_SUFFIX; n++) {
      const suffix = n === 1 ? '' : `${separator}${n}`;
      const slug = fit(base, max_length - suffix.length, separator) + suffix;
      // ON CONFLICT DO NOTHING: a taken slug changes no row, atomically, also against another process.
      const taken = await this.store.run('INSERT INTO slug_slugs (slug, title, created_at) VALUES (?, ?, ?) ON CONFLICT (slug) DO NOTHING', [
        slug,
        title,
        createdAt,
      ]);
      if (taken.changes) return { slug, title, created_at: createdAt };
    }
    throw conflict(`every slug from '${base}' to '${base}${separator}${MAX_SUFFIX}' is taken`);
  }

  find(slug: string): Promise<SlugRecord | undefined> {
    return this.store.one<SlugRecord>('SELECT slug, title, created_at FROM slug_slugs WHERE slug = ?', [slug]);
  }
}
