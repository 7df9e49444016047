/**
 * Whether a build serves the running modules' views. The build made at install (modules/dashboard/dist) holds the
 * built-in modules' views; a third-party module's (loaded from module_paths) are not in it. When a running module's
 * view is missing from the served build, or a third-party module's dashboard/ folder changed since it was built, the
 * dashboard module builds again, with those modules' folders, into its data folder ($TALON_HOME/data/dashboard/dist)
 * and serves that build from then on (index.ts).
 */
import type { BuildManifest, Bundle } from './assets.ts';
import { dashboardStamp } from './view-declarations.mjs';
import type { ModuleViews } from './views.ts';

/** What the build lacks for these modules, in words for the log ('hello/hello: not built'); empty when it serves all. */
export function lacking(manifest: BuildManifest, running: readonly ModuleViews[], stamp: (dir: string) => string = dashboardStamp): string[] {
  const built = new Set(manifest.views.map((v) => `${v.module}/${v.id}`));
  return running.flatMap((m) => {
    const missing = m.views.filter((v) => !built.has(`${m.module}/${v.id}`)).map((v) => `${m.module}/${v.id}: not built`);
    if (missing.length || !m.thirdParty) return missing;
    return manifest.stamps[m.module] === stamp(m.dir) ? [] : [`${m.module}: its dashboard/ folder changed since the build`];
  });
}

/**
 * The build to serve: the one made at install while it serves every running view; else the data folder's, when it
 * does and is not older (an upgrade rebuilds the install's, and its shell wins); else none (build again).
 */
export function pick(install: Bundle | undefined, own: Bundle | undefined, running: readonly ModuleViews[]): Bundle | undefined {
  if (install && lacking(install.manifest, running).length === 0) return install;
  if (own && (!install || own.builtAt >= install.builtAt) && lacking(own.manifest, running).length === 0) return own;
  return undefined;
}
