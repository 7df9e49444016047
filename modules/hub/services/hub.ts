/** The two registries behind one service, plus search and paging over their skill entries. */
import type { RegistryEntry, RegistryService } from '@talon/hub';
import type { Registry } from './registry.ts';

export type Which = 'hub' | 'hub-cn';

export function registryService(pick: (which: Which) => Registry): RegistryService {
  return {
    entries: (kind, which = 'hub') => pick(which).entries(kind),
    status: (which = 'hub') => pick(which).status(),
    stage: (kind, slug, dest, which = 'hub') => pick(which).stage(kind, slug, dest),
    readFile: (kind, slug, file, which = 'hub') => pick(which).readFile(kind, slug, file),
    readEntry: (kind, slug, which = 'hub') => pick(which).readEntry(kind, slug),
    sync: (which = 'hub') => pick(which).sync(),
  };
}

/** Entries matching every word of q in name, slug, description or tags (case-insensitive), best matches first. */
export function search(entries: RegistryEntry[], q: string): RegistryEntry[] {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const scored = entries
    .map((e) => {
      const name = `${e.slug} ${e.name}`.toLowerCase();
      const text = `${name} ${e.description} ${e.tags.join(' ')} ${e.category}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) return undefined;
      return { e, score: words.filter((w) => name.includes(w)).length * 10 + e.downloads / 1e6 };
    })
    .filter((x): x is { e: RegistryEntry; score: number } => Boolean(x));
  return scored.sort((a, b) => b.score - a.score || a.e.slug.localeCompare(b.e.slug)).map((x) => x.e);
}

export function page<T>(items: T[], pageNo: number, size: number): T[] {
  return items.slice((pageNo - 1) * size, pageNo * size);
}
