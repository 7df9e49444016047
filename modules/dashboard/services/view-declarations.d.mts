/** A view as a module declares it in `[contributes.dashboard]` (the schema is in view-declarations.mjs). */
export interface DeclaredView {
  id: string;
  title: string;
  group: string;
  order: number;
  entry: string;
  requires?: string[];
  preload?: boolean;
  landing?: boolean;
  first_reads?: string[];
  first_reads_with_param?: string[];
  badge?: ViewBadge;
}

/** A count shown beside a view's name in the navigation: `field` (a number) of the JSON a GET of `path` answers. */
export interface ViewBadge {
  path: string;
  field: string;
}

export function checkContribution(contribution: unknown): { views: DeclaredView[] } | { problem: string };

/** A declared view of a module folder, with its module's name and its entry as an absolute path. */
export interface BuiltView extends DeclaredView {
  module: string;
  /** The module's folder. */
  dir: string;
  file: string;
}

export function declaredViews(dir: string): BuiltView[];

export function dashboardStamp(dir: string): string;
