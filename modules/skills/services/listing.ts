/**
 * The body of GET /api/skills, made once per registry change and category: the JSON as bytes and its ETag. With a
 * thousand skills the body is about 250 KB: serialising and encoding it on every request was most of a request's
 * time. (gzip was tried: for a client on the same machine, inflating costs more than the bytes it saves.)
 */
import { createHash } from 'node:crypto';
import type { SkillStore } from '@talon/skills';
import type { SkillRegistry } from './store.ts';

export interface ListBody {
  json: Buffer;
  etag: string;
}

const MAX_CACHED = 100;

export class SkillListing {
  private readonly bodies = new Map<string, ListBody>();
  private generation = -1;

  constructor(
    private readonly store: SkillStore,
    private readonly registry: SkillRegistry,
  ) {}

  body(category: string | undefined): ListBody {
    if (this.generation !== this.registry.generation) this.bodies.clear();
    this.generation = this.registry.generation;
    const key = category ?? '';
    let body = this.bodies.get(key);
    if (!body) {
      body = this.build(category);
      if (this.bodies.size >= MAX_CACHED) this.bodies.clear();
      this.bodies.set(key, body);
    }
    return body;
  }

  private build(category: string | undefined): ListBody {
    const all = this.store.list();
    const skills = category ? all.filter((s) => s.category === category) : all;
    const categories = [...new Set(all.map((s) => s.category))].sort();
    const blocked = this.registry.blocked().map(({ name, path, reason }) => ({ name, path, reason }));
    const json = Buffer.from(JSON.stringify({ skills, total: skills.length, categories, blocked }));
    return { json, etag: `"${createHash('sha1').update(json).digest('base64url')}"` };
  }
}

/** If-None-Match holds the ETag (a list, weak forms and "*" included). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  return (header ?? '').split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
