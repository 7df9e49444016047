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
  /** The heading the navigation lists it under. */
  group: string;
  /** Module ids that must be running for the view to be listed. */
  requires: string[];
  load: () => Promise<{ default: ComponentType<ViewProps> }>;
  /** What the view reads first, by exact path: fetched beside the sign-in probe when the visit opens on it. */
  firstReads?: (params: string[]) => string[];
}

const seg = encodeURIComponent;

/** What the chat reads first without an agent in the URL: the first agent only (views/chat.tsx). */
export const FIRST_AGENT = '/api/agents?limit=1&offset=0';

export const VIEWS: ViewDef[] = [
  {
    id: 'chat',
    title: 'Chat',
    group: 'Agents',
    requires: ['agents'],
    load: () => import('./chat.tsx'),
    // The first agent, or the agent in the URL with its conversation and sessions (components/sessions.tsx's first page).
    firstReads: ([id]) =>
      id ? [`/api/agents/${seg(id)}`, `/api/agents/${seg(id)}/session`, `/api/agents/${seg(id)}/sessions?limit=20&offset=0`] : [FIRST_AGENT],
  },
  { id: 'agents', title: 'Agents', group: 'Agents', requires: ['agents'], load: () => import('./agents.tsx') },
  { id: 'memory', title: 'Memory', group: 'Agents', requires: ['memory', 'agents'], load: () => import('./memory.tsx') },
  { id: 'approvals', title: 'Approvals', group: 'Agents', requires: ['approvals'], load: () => import('./approvals.tsx') },
  { id: 'workflows', title: 'Workflows', group: 'Automation', requires: ['workflows'], load: () => import('./workflows.tsx') },
  { id: 'triggers', title: 'Triggers', group: 'Automation', requires: ['triggers', 'agents'], load: () => import('./triggers.tsx') },
  { id: 'schedules', title: 'Schedules', group: 'Automation', requires: ['scheduler'], load: () => import('./schedules.tsx') },
  { id: 'goals', title: 'Goals', group: 'Automation', requires: ['goals'], load: () => import('./goals.tsx') },
  { id: 'tasks', title: 'Task board', group: 'Automation', requires: ['tasks'], load: () => import('./tasks.tsx') },
  { id: 'models', title: 'Models & providers', group: 'Extend', requires: ['catalog'], load: () => import('./models.tsx') },
  { id: 'skills', title: 'Skills & hub', group: 'Extend', requires: ['skills'], load: () => import('./skills.tsx') },
  { id: 'hands', title: 'Hands', group: 'Extend', requires: ['hands'], load: () => import('./hands.tsx') },
  { id: 'plugins', title: 'Plugins', group: 'Extend', requires: ['plugins'], load: () => import('./plugins.tsx') },
  { id: 'mcp', title: 'MCP servers', group: 'Extend', requires: ['mcp'], load: () => import('./mcp.tsx') },
  { id: 'usage', title: 'Usage & budgets', group: 'Operate', requires: ['usage'], load: () => import('./usage.tsx') },
  { id: 'logs', title: 'Live logs', group: 'Operate', requires: ['logs'], load: () => import('./logs.tsx') },
  { id: 'audit', title: 'Audit trail', group: 'Operate', requires: ['audit'], load: () => import('./audit.tsx') },
  { id: 'security', title: 'Security', group: 'Operate', requires: ['security'], load: () => import('./security.tsx') },
  { id: 'config', title: 'Configuration', group: 'Operate', requires: ['config-api'], load: () => import('./config.tsx') },
  { id: 'backups', title: 'Backups', group: 'Operate', requires: ['backup'], load: () => import('./backups.tsx') },
  { id: 'modules', title: 'Modules', group: 'Operate', requires: [], load: () => import('./modules.tsx') },
];
