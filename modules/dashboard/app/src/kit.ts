/**
 * `@talon/dashboard-kit`: what the shell lends the modules' views (modules/<name>/dashboard/*.tsx), their one import
 * of it (never a path into this folder). The API client, routing, formatting and the shared components: the agent
 * chooser, the pager, tables, charts, Markdown, the search form, action feedback, a confirm-in-place button and errors.
 */
export { api, ApiError, request, seg, type RequestOptions } from './lib/api.tsx';
export { readSse, type SseEvent } from './lib/sse.tsx';
export { useApi, type Loaded } from './lib/use-api.tsx';
export { href, navigate } from './lib/hash.tsx';
export { fmtClock, fmtInt, fmtJson, fmtTime, fmtUsd, plural } from './lib/format.tsx';
export { download } from './lib/download.tsx';
export { useHasModule, useRefreshModules } from './lib/modules.tsx';
export { useAgentNames, useAgentOrFirst } from './lib/agents.tsx';
export { ErrorText } from './components/error.tsx';
export { useAction } from './components/action.tsx';
export { ConfirmButton } from './components/confirm-button.tsx';
export { Pager, usePage, useServerPage, type PageState } from './components/pager.tsx';
export { Table, type Column } from './components/table.tsx';
export { SearchForm } from './components/search-form.tsx';
export { AgentPicker, type AgentChoice } from './components/agent-picker.tsx';
export { Chart, type Series } from './components/chart.tsx';
export { loadMarkdown, Markdown } from './components/markdown.tsx';
export { refreshBadges } from './components/nav-badge.tsx';
export type { ViewProps } from './lib/views.tsx';
