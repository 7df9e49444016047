/**
 * Every view of the dashboard, registered here and nowhere else. A view is one file whose default export is a
 * component taking the route's parameters; it is loaded when first shown (its own chunk), and listed only while
 * the modules it needs are running (GET /api/modules), so a view for a module that is not installed never shows.
 */
import type { ComponentType } from 'preact';

export interface ViewProps {
  /** The route's parameters after the view's name: #/chat/<agent id> gives ['<agent id>']. */
  params: string[];
}

export interface ViewDef {
  id: string;
  title: string;
  /** Module ids that must be running for the view to be listed. */
  requires: string[];
  load: () => Promise<{ default: ComponentType<ViewProps> }>;
}

export const VIEWS: ViewDef[] = [
  { id: 'chat', title: 'Chat', requires: ['agents'], load: () => import('./chat.tsx') },
  { id: 'agents', title: 'Agents', requires: ['agents'], load: () => import('./agents.tsx') },
  { id: 'models', title: 'Models & providers', requires: ['catalog'], load: () => import('./models.tsx') },
  { id: 'memory', title: 'Memory', requires: ['memory', 'agents'], load: () => import('./memory.tsx') },
  { id: 'usage', title: 'Usage & budgets', requires: ['usage'], load: () => import('./usage.tsx') },
  { id: 'logs', title: 'Live logs', requires: ['logs'], load: () => import('./logs.tsx') },
  { id: 'security', title: 'Security', requires: ['security'], load: () => import('./security.tsx') },
  { id: 'workflows', title: 'Workflows', requires: ['workflows'], load: () => import('./workflows.tsx') },
  { id: 'triggers', title: 'Triggers', requires: ['triggers', 'agents'], load: () => import('./triggers.tsx') },
  { id: 'tasks', title: 'Task board', requires: ['tasks'], load: () => import('./tasks.tsx') },
  { id: 'skills', title: 'Skills & MCP', requires: ['skills'], load: () => import('./skills.tsx') },
  { id: 'approvals', title: 'Approvals', requires: ['approvals'], load: () => import('./approvals.tsx') },
  { id: 'schedules', title: 'Schedules', requires: ['scheduler'], load: () => import('./schedules.tsx') },
  { id: 'audit', title: 'Audit trail', requires: ['audit'], load: () => import('./audit.tsx') },
  { id: 'backups', title: 'Backups', requires: ['backup'], load: () => import('./backups.tsx') },
  { id: 'config', title: 'Configuration', requires: ['config-api'], load: () => import('./config.tsx') },
  { id: 'modules', title: 'Modules', requires: [], load: () => import('./modules.tsx') },
];
