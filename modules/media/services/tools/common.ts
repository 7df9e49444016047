/** What the media tools share: their dependencies, the failure result, and who a call is for. */
import type { FileOwner, StoredFile, ToolContext, ToolOutput, UploadFiles } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import type { LlmService } from '@talon/llm';
import type { MediaDriverKit, MediaService } from '@talon/media';
import type { MediaCore } from '../media-service.ts';

export interface ToolDeps {
  service: MediaService;
  core: MediaCore;
  kit: MediaDriverKit;
  files: () => UploadFiles;
  catalog: CatalogService;
  /** The llm service when its module runs (media_describe). */
  llm: () => LlmService | undefined;
}

/** The stand-in agent of a direct invocation without one (agents' operator record): it owns no files. */
const OPERATOR_ID = '00000000-0000-0000-0000-000000000000';

/** Metering and file ownership go to the agent the tool runs for; its stop stops the provider call. */
export const callMeta = (ctx: ToolContext) => ({ agentId: ctx.agent.id === OPERATOR_ID ? undefined : ctx.agent.id, signal: ctx.signal });

/**
 * Who a file or video task is read for: the agent the tool runs for (the operator's stand-in is no agent). A file or
 * task of another agent is answered as an unknown one, so a tool never tells that it exists.
 */
export const ownerOf = (ctx: ToolContext): FileOwner => ({ agentId: callMeta(ctx).agentId });

/** The answer for an unknown file and for another agent's file alike. */
export const FILE_NOT_FOUND = 'file not found';

export function failure(tool: string, err: unknown): ToolOutput {
  return { content: `${tool} failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
}

export const done = (content: unknown, files: StoredFile[] = []): ToolOutput => ({
  content: JSON.stringify(content),
  isError: false,
  ...(files.length ? { files } : {}),
});

/** The input's own keys that are set, typed by the caller's schema (the agents module checked the input against it). */
export const given = <T>(input: Record<string, unknown>): T => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null)) as T;
