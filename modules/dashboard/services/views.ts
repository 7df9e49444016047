/**
 * The views of the running modules, as they declare them (`[contributes.dashboard]`, checked against the schema in
 * view-declarations.mjs). The dashboard names no module: a module's views are listed while it runs (and the modules
 * a view `requires` run), so a module disabled, failed or stopped takes its views out of the navigation and its route.
 * A declaration that does not fit, or a view id another running module already took, is logged once and skipped.
 */
import type { ModuleInfo } from '@talon/module-sdk';
import { checkContribution, type DeclaredView, type ViewBadge } from './view-declarations.mjs';

/** A view as the shell lists it (GET /api/dashboard/views, and the page's talon-views meta tag). */
export interface ListedView {
  module: string;
  id: string;
  title: string;
  group: string;
  order: number;
  badge?: ViewBadge;
}

/** A running module with views: what the build must hold (services/coverage.ts). */
export interface ModuleViews {
  module: string;
  dir: string;
  thirdParty: boolean;
  views: DeclaredView[];
}

export class DashboardViews {
  private readonly warned = new Set<string>();
  constructor(private readonly warn: (module: string, problem: string) => void) {}

  /** The running modules' views (ids unique, first module in load order wins). */
  running(modules: readonly ModuleInfo[]): ModuleViews[] {
    const up = new Set(modules.filter((m) => m.state === 'running').map((m) => m.id));
    const taken = new Set<string>();
    const found: ModuleViews[] = [];
    for (const m of modules) {
      const contribution = m.contributes.dashboard;
      if (!up.has(m.id) || contribution === undefined) continue;
      const checked = checkContribution(contribution);
      if ('problem' in checked) {
        this.warnOnce(m.id, `[contributes.dashboard] does not fit, skipped: ${checked.problem}`);
        continue;
      }
      const views = checked.views.filter((v) => {
        if (taken.has(v.id)) this.warnOnce(m.id, `its view '${v.id}' is skipped: another running module has a view of that id`);
        return !taken.has(v.id) && (v.requires ?? []).every((r) => up.has(r));
      });
      for (const v of views) taken.add(v.id);
      if (views.length) found.push({ module: m.id, dir: m.dir, thirdParty: m.thirdParty, views });
    }
    return found;
  }

  /** What the navigation lists, by order: the running views the served build holds (`built`: '<module>/<id>'). */
  listed(modules: readonly ModuleInfo[], built: (module: string, id: string) => boolean): ListedView[] {
    return this.running(modules)
      .flatMap(({ module, views }) =>
        views.filter((v) => built(module, v.id)).map(({ id, title, group, order, badge }) => ({ module, id, title, group, order, ...(badge && { badge }) })),
      )
      .sort((a, b) => a.order - b.order);
  }

  private warnOnce(module: string, problem: string): void {
    if (this.warned.has(`${module}\0${problem}`)) return;
    this.warned.add(`${module}\0${problem}`);
    this.warn(module, problem);
  }
}
