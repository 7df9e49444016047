/** The catalogue of built-in tools this module adds to the agents' tools waterfall. */
import type { BuiltinTool, ToolDeps } from './deps.ts';
import { fileReadTool } from '../tools/file-read.ts';
import { fileWriteTool } from '../tools/file-write.ts';
import { fileListTool } from '../tools/file-list.ts';
import { applyPatchTool } from '../tools/apply-patch.ts';
import { shellExecTool } from '../tools/shell-exec.ts';
import { webFetchTool } from '../tools/web-fetch.ts';
import { memoryStoreTool } from '../tools/memory-store.ts';
import { memoryRecallTool } from '../tools/memory-recall.ts';
import { memoryListTool } from '../tools/memory-list.ts';
import { notifyOwnerTool } from '../tools/notify-owner.ts';
import { agentSendTool } from '../tools/agent-send.ts';
import { agentSpawnTool } from '../tools/agent-spawn.ts';
import { agentListTool } from '../tools/agent-list.ts';
import { agentKillTool } from '../tools/agent-kill.ts';

const FACTORIES = [
  fileReadTool,
  fileWriteTool,
  fileListTool,
  applyPatchTool,
  shellExecTool,
  webFetchTool,
  memoryStoreTool,
  memoryRecallTool,
  memoryListTool,
  notifyOwnerTool,
  agentSendTool,
  agentSpawnTool,
  agentListTool,
  agentKillTool,
];

export function builtinTools(deps: ToolDeps): BuiltinTool[] {
  return FACTORIES.map((make) => make(deps));
}
