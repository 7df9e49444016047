/** Regular files of a folder by relative path ('/' separated, sorted); links and .git are not content. */
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      if (name === '.git') continue;
      const child = path.join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const st = lstatSync(child);
      if (st.isDirectory()) walk(child, childRel);
      else if (st.isFile()) out.push(childRel);
    }
  };
  walk(dir, '');
  return out.sort();
}
