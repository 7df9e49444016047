/**
 * The installed hand definitions: bundled ones (shipped in the module's bundled/ folder, never uninstalled) and
 * custom ones (one folder per hand under the hands folder: HAND.toml, SKILL.md, SKILL-<role>.md). Read at start
 * and on reload; a folder that does not parse is listed with its reason and skipped.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { HandDefinition } from '@talon/hands';
import { parseHand } from './definition.ts';

export interface BrokenHand {
  folder: string;
  reason: string;
}

const SKILL_FILE = /^SKILL(?:-([A-Za-z0-9_-]+))?\.md$/;
const MAX_SKILL_BYTES = 1024 * 1024;

/** SKILL.md ('' key) and SKILL-<role>.md files of a hand folder. */
export function readSkillFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const m = SKILL_FILE.exec(name);
    const full = path.join(dir, name);
    if (!m || !statSync(full).isFile() || statSync(full).size > MAX_SKILL_BYTES) continue;
    files[m[1] ?? ''] = readFileSync(full, 'utf8');
  }
  return files;
}

export class HandCatalog {
  private hands = new Map<string, { def: HandDefinition; print: string }>();
  private broken: BrokenHand[] = [];

  constructor(
    private readonly bundledDir: string,
    private readonly customDir: () => string,
  ) {}

  list(): HandDefinition[] {
    return [...this.hands.values()].map((h) => h.def);
  }

  get(id: string): HandDefinition | undefined {
    return this.hands.get(id)?.def;
  }

  failures(): BrokenHand[] {
    return this.broken;
  }

  /** Reads every folder again: what was added, changed and removed. A custom hand never replaces a bundled one. */
  reload(): { added: string[]; updated: string[]; removed: string[]; total: number } {
    const next = new Map<string, { def: HandDefinition; print: string }>();
    const broken: BrokenHand[] = [];
    for (const [root, source] of [
      [this.bundledDir, 'bundled'],
      [this.customDir(), 'custom'],
    ] as const) {
      if (!existsSync(root)) continue;
      for (const name of readdirSync(root).sort()) {
        const dir = path.join(root, name);
        const file = path.join(dir, 'HAND.toml');
        if (!statSync(dir).isDirectory() || !existsSync(file)) continue;
        try {
          const text = readFileSync(file, 'utf8');
          const skills = readSkillFiles(dir);
          const def = parseHand(text, skills, source, dir);
          if (next.has(def.id)) throw new Error(`hand id '${def.id}' is already defined by ${next.get(def.id)!.def.path}`);
          next.set(def.id, { def, print: fingerprint(text, skills) });
        } catch (err) {
          broken.push({ folder: dir, reason: (err as Error).message });
        }
      }
    }
    const added = [...next.keys()].filter((id) => !this.hands.has(id));
    const updated = [...next.keys()].filter((id) => this.hands.has(id) && this.hands.get(id)!.print !== next.get(id)!.print);
    const removed = [...this.hands.keys()].filter((id) => !next.has(id));
    this.hands = next;
    this.broken = broken;
    return { added, updated, removed, total: next.size };
  }
}

function fingerprint(text: string, skills: Record<string, string>): string {
  const hash = createHash('sha256').update(text);
  for (const key of Object.keys(skills).sort()) hash.update(`\0${key}\0${skills[key]}`);
  return hash.digest('hex');
}
