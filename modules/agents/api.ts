/**
 * Contract of the agents module: what other modules (tools, memory,
 * checkpoints, usage, the WebSocket and chat-completions adapters) may rely
 * on. Import types and refs from here; never import agents internals.
 */
import type { Logger } from 'pino';
import {
  AsyncParallelHook,
  AsyncSeriesBailHook,
  AsyncSeriesHook,
  AsyncSeriesWaterfallHook,
  SyncBailHook,
  SyncHook,
  SyncWaterfallHook,
  defineEvents,
  defineHooks,
  payload,
  serviceRef,
  type JsonSchema,
  type Queries,
} from '@talon/module-sdk';
import type { ContentBlock, Usage } from '@talon/llm';

// ------------------------------------------------------------------ agents

/** The parsed agent.toml. Keys beyond the spec's are kept in `extra`. */
export interface AgentManifest {
  name: string;
  version?: string;
  description?: string;
  author?: string;
  module?: string;
  tags?: string[];
  model: {
    provider: string;
    model: string;
    system_prompt?: string;
    max_tokens?: number;
    temperature?: number;
    api_key_env?: string;
    base_url?: string;
  };
  capabilities: {
    tools: string[];
    network: string[];
    memory_read: string[];
    memory_write: string[];
    shell: string[];
    agent_spawn?: boolean;
    max_llm_tokens_per_hour?: number;
  };
  /** Every other key of the file, unchanged. */
  extra: Record<string, unknown>;
}

export type AgentState = 'Running' | 'Stopped';
export type AgentMode = 'Normal' | 'Stable';

export interface AgentRecord {
  id: string;
  name: string;
  state: AgentState;
  mode: AgentMode;
  createdAt: string;
  /** Current session. */
  sessionId: string;
  manifest: AgentManifest;
  description: string;
  tags: string[];
  systemPrompt: string;
  /** Effective model (after mode pinning and PUT /model). */
  model: { provider: string; model: string };
  /** Tool names granted (may hold '*'). */
  tools: string[];
  skills: string[];
  mcpServers: string[];
  identity: { name?: string; avatar?: string; persona?: string };
  /** Free-form configuration set with PATCH /api/agents/{id}/config. */
  config: Record<string, unknown>;
  /** The agent that spawned this one through agent_spawn, if any. */
  parentId?: string;
  /** Absolute path of the agent's private workspace folder. */
  workspace: string;
  /** Hourly token cap (manifest capabilities or resources), 0 = none. */
  maxLlmTokensPerHour: number;
}

/**
 * The agents. Lookups are served from memory (the records of every process sharing the database: a change made by
 * another process is seen here within about a quarter of a second); changes are written to the database first, so
 * they are asynchronous.
 */
export interface AgentRegistry {
  list(): AgentRecord[];
  get(id: string): AgentRecord | undefined;
  findByName(name: string): AgentRecord | undefined;
  /**
   * Parses and validates the TOML (an unknown provider, model, tool, skill or MCP server is a 400 naming it, its
   * `problems` listing each); rejects with HttpError 400 naming the problem, 409 for a name in use, or the
   * status of an agentHooks.authorizeSpawn refusal. `signedManifest` is a signed envelope of the same manifest.
   */
  spawn(input: { manifestToml: string; parentId?: string; signedManifest?: string }): Promise<AgentRecord>;
  /** Resolves false when there was no such agent. */
  kill(id: string): Promise<boolean>;
  /** Running or Stopped (a Stopped agent refuses turns with 409); rejects with HttpError 404 for an unknown agent. */
  setState(id: string, state: AgentState): Promise<AgentRecord>;
  /** Sets the model by id or alias; rejects with HttpError 400/404 when unknown. */
  setModel(id: string, model: string): Promise<AgentRecord>;
}

export const agentRegistry = serviceRef<AgentRegistry>('agents.registry');

// ------------------------------------------------------------------ files

/** Kinds of file the service makes (media results); each has its own size cap and the generated-file retention. */
export type GeneratedKind = 'image' | 'audio' | 'video';

export interface StoredFile {
  file_id: string;
  /** `/api/uploads/<file_id>`. */
  url: string;
  /** Sniffed from the bytes, never a provider's label. */
  content_type: string;
  filename: string;
  size: number;
}

/**
 * The upload store as other modules see it: files the service generated (media results) are stored here, served at
 * /api/uploads/<file_id> like uploads, and removed after the generated-file retention. A file whose bytes are not of
 * the kind (a provider's HTML error page as an "image") or past the kind's cap is refused: the rejection's name is
 * 'FileRefused' and its message says why.
 */
export interface UploadFiles {
  saveGenerated(input: {
    kind: GeneratedKind;
    bytes: Buffer;
    /** The name without extension; the extension follows the sniffed type. */
    name: string;
    agentId?: string;
    source: { provider: string; model: string };
  }): Promise<StoredFile>;
  /**
   * A stored file's bytes and sniffed type (an attachment to transcribe or describe); undefined when unknown. With
   * `owner`, only a file that agent may read: its own (an upload to it, or a file made for it), or a generated file
   * made for no agent (the HTTP media routes); any other file is undefined, as an unknown one is, so a caller cannot
   * learn that another agent's file exists. `agentId` undefined is no agent: only the generated files of no agent.
   * Without `owner` the read is unchecked: only for an id the caller has from a trusted source (the files of a turn's
   * own result); a tool must pass the agent it runs for.
   */
  read(fileId: string, owner?: FileOwner): Promise<{ bytes: Buffer; content_type: string; filename: string } | undefined>;
  /** A stored file as a tool attaches it (its row: type, name, size; no bytes read), under read's owner rule. */
  describe(fileId: string, owner: FileOwner): Promise<StoredFile | undefined>;
}

/** Who asks for a stored file (UploadFiles.read): the agent a tool runs for, or undefined for no agent. */
export interface FileOwner {
  agentId: string | undefined;
}

export const uploadFiles = serviceRef<UploadFiles>('agents.uploads');

// ------------------------------------------------------------------ turns

export interface TurnRequest {
  agentId: string;
  /** Defaults to the agent's current session. */
  sessionId?: string;
  message: string;
  /** Uploaded files by id (see POST /api/agents/{id}/upload). */
  attachments?: Array<{ file_id: string }>;
  /** Inline images (chat-completions image_url parts). */
  images?: Array<{ mediaType: string; data: string }>;
  temperature?: number;
  maxTokens?: number;
  /** Aborting stops the turn (like POST /stop). */
  signal?: AbortSignal;
  /** Set when a tool of another agent's turn started this one (stop cascades down). */
  parentTurnId?: string;
  /**
   * Where the turn came from ('http', 'ws', 'v1', 'agent_send', 'trigger', a channel's name...), for logs, usage and
   * trust: only the local user's origins ('http', 'http-stream', 'ws', 'v1') are trusted; any other origin, or none
   * ('module'), makes the message untrusted input (docs/agents.md, "Turn origins and trust").
   */
  origin?: string;
  /**
   * The turn starts from the outcome of a tool call that was held for a human decision (approvals) instead of a
   * user message (`message` is then empty): the session gets the call again with its outcome as the tool's result
   * (ids: HELD_RESULT_PREFIX + the held call's id), never as a message from the user.
   */
  resumes?: HeldCallOutcome;
  /**
   * The user message is already the last message of `sessionId`: a channel appended it (SessionStore.appendUser) in
   * the transaction that marked its journal row adopted, so a crash never leaves it in the session twice. The turn
   * appends none; `message` is its text, for hooks and logs.
   */
  messageInSession?: boolean;
}

/** A held tool call after its decision: the model reads `content` as the call's result. */
export interface HeldCallOutcome {
  /** The tool_use id of the held call. */
  callId: string;
  approvalId: string;
  tool: string;
  input: Record<string, unknown>;
  status: 'approved' | 'rejected' | 'expired' | 'skipped';
  content: string;
  isError: boolean;
}

/** The tool_use id of a held call's outcome in the session is this prefix + the held call's id (clients fold them). */
export const HELD_RESULT_PREFIX = 'held-';

/** A tool call held for a human decision (authorizeToolCall): not run yet; its outcome comes in a later turn. */
export interface HeldToolCall {
  approvalId: string;
  expiresAt: string;
}

export interface TurnResult {
  turnId: string;
  agentId: string;
  sessionId: string;
  response: string;
  inputTokens: number;
  outputTokens: number;
  iterations: number;
  costUsd: number;
  ownerNotice?: string;
  /** True when an interrupt or stop ended the turn early. */
  interrupted: boolean;
  /** The files the turn's tools made (ToolOutput.files), in order; absent when none. */
  files?: StoredFile[];
}

/** What a running turn reports, in order. SSE, WebSocket and attach map these. */
export type TurnEvent =
  | { type: 'started'; turnId: string; agentId: string; sessionId: string }
  | { type: 'text_delta'; content: string }
  | { type: 'tool_use'; id: string; tool: string; input: Record<string, unknown> }
  | { type: 'tool_result'; id: string; tool: string; input: Record<string, unknown>; content: string; isError: boolean }
  /** The call was held for a human decision (sent before its tool_result, which carries what the model was told). */
  | { type: 'approval_pending'; id: string; tool: string; input: Record<string, unknown>; approvalId: string; expiresAt: string }
  /** A turn that resumes a held call (TurnRequest.resumes) starts with its outcome. */
  | { type: 'approval_result'; outcome: HeldCallOutcome }
  | { type: 'owner_notice'; text: string }
  | { type: 'llm_done'; usage: Usage }
  | { type: 'done'; result: TurnResult }
  | { type: 'error'; message: string; status: number };

export interface AgentRunner {
  /** Runs one turn. Rejects with HttpError (status for the client) on failure. */
  run(request: TurnRequest, onEvent?: (event: TurnEvent) => void): Promise<TurnResult>;
  /** Aborts every running turn of the agent and of the subagents it started. */
  stop(agentId: string): boolean;
  /** Sets the interrupt flag of a session (see the spec's interrupt rules). */
  interrupt(agentId: string, sessionId: string): void;
  /** Events of every turn of the agent, for attach (the second argument says which turn). Returns the unsubscribe function. */
  subscribe(agentId: string, listener: (event: TurnEvent, turn: { turnId: string; sessionId: string }) => void): () => void;
  isRunning(agentId: string): boolean;
}

export const agentRunner = serviceRef<AgentRunner>('agents.runner');

// ------------------------------------------------------------------ sessions

export interface StoredMessage {
  role: 'User' | 'Assistant';
  content: string;
  /** Provider-neutral blocks (tool calls and results included). */
  blocks?: ContentBlock[];
  createdAt: string;
  /** An assistant reply a stop cut short: `content` is what the model had said by then. */
  stopped?: boolean;
  /** On the turn's last assistant message: the files its tools made (ToolOutput.files), in order. */
  files?: StoredFile[];
}

export interface SessionStore {
  /** The session's messages, oldest first (from memory for recently used sessions). */
  messages(sessionId: string): Promise<StoredMessage[]>;
  /**
   * Creates a session for the agent and returns its id (does not switch); with `t`, inside the caller's transaction
   * (the agent is then not checked: the caller looked it up).
   */
  create(agentId: string, label?: string, t?: Queries): Promise<string>;
  /**
   * Appends a user message inside the caller's transaction (`ctx.store.tx`), so that it is in the session exactly
   * when the caller's own rows say so. Call it when no turn of the session is writing (its previous turn ended), then
   * run the turn with `messageInSession`. `blocks` carry what the text cannot (a channel's inbound images), stored
   * with the message as a turn's attachments are: the text block first, then the files.
   */
  appendUser(t: Queries, sessionId: string, content: string, blocks?: ContentBlock[]): Promise<void>;
  /**
   * Resolves once the messages turns wrote behind (their replies, tool results) are in the database. A caller of
   * `appendUser` awaits it first, outside its transaction: otherwise the previous turn's reply, still queued, would be
   * written after the new message, and the model would read two user messages run together as one.
   */
  settled(): Promise<void>;
  exists(agentId: string, sessionId: string): Promise<boolean>;
  /** Starts a fresh session and makes it current (the old one stays resumable). */
  newSession(agentId: string): Promise<string>;
  /** Replaces older messages with an LLM summary, keeping the most recent ones. */
  compact(agentId: string): Promise<{ message: string }>;
}

export const sessionStore = serviceRef<SessionStore>('agents.sessions');

// ------------------------------------------------------------------ tools

export interface ToolContext {
  agent: AgentRecord;
  sessionId: string;
  turnId: string;
  callId: string;
  /** Absolute path of the agent's workspace; relative tool paths resolve here. */
  workspace: string;
  /** Aborted on /stop; a tool that runs long should honour it. */
  signal: AbortSignal;
  log: Logger;
  /** Queues a private notice for the owner (notify_owner). */
  notifyOwner(text: string): void;
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** Files the tool made (generated media): attached to the turn's reply, and sent with it on a channel. */
  files?: StoredFile[];
}

export interface ToolDefinition {
  name: string;
  description: string;
  /** Sent to the model, and checked before the tool runs: input that does not match is refused. */
  inputSchema: JsonSchema;
  /** Other names the model may use for it (file_read ← read_file...). */
  aliases?: string[];
  /**
   * A grant besides the agent's tool list: tools an agent opts into another way (a skill on its skill
   * list) say here whether this agent has them.
   */
  grantedTo?(agent: AgentRecord): boolean;
  /**
   * true: only grantedTo decides, the agent's tool list (even '*') does not grant it. MCP tools use it: an agent's
   * mcp_servers list alone chooses which servers' tools it gets.
   */
  exclusiveGrant?: boolean;
  /** Module that contributes it ('builtin' for the tools module). */
  source?: string;
  /**
   * true: it acts for an agent (sends, spawns, notifies, runs commands, remembers), so a direct invocation must name
   * one. Other tools also run without an agent, in the direct-invocation workspace ($TALON_HOME/workspaces/direct-invocation).
   */
  requiresAgent?: boolean;
  execute(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
}

/** One tool run outside a turn (POST /api/tools/{name}/invoke). */
export interface ToolInvocation {
  /** The tool's name or one of its aliases. */
  tool: string;
  input: Record<string, unknown>;
  /** The agent it runs as (workspace, grants, hooks); without one, tools that do not act for an agent run as the operator. */
  agentId?: string;
  /** Aborting stops the tool (a client that went away). */
  signal: AbortSignal;
  /** Who asked, for the logs ('http'...). */
  origin: string;
}

export interface ToolInvocationResult {
  /** The canonical tool name. */
  tool: string;
  output: ToolOutput;
  /** Notices the tool raised for the agent's owner (notify_owner), in order. */
  ownerNotices: string[];
}

/** The tools agents use, and the one way to run a tool: turns and direct invocations go through it. */
export interface AgentTools {
  /** Every tool contributed through agentHooks.tools (the first contribution of a name wins). */
  list(): ToolDefinition[];
  /** A tool by its name or one of its aliases. */
  find(name: string): ToolDefinition | undefined;
  /** Whether an agent's tool list grants a tool: '*', the tool's name or one of its aliases. */
  grants(agentTools: readonly string[], tool: Pick<ToolDefinition, 'name' | 'aliases'>): boolean;
  /** The tools an agent is granted (its tool list, or a tool's own grant): what its turns offer the model. */
  allowed(agent: AgentRecord): ToolDefinition[];
  /**
   * Runs one tool the way the agent loop does (grant, input check, beforeToolCall/afterToolCall around it, a
   * throw becomes an error result). Refusals throw HttpError: 404 unknown tool or agent, 403 not granted,
   * 400 input that does not match the schema or a tool that needs an agent called without one.
   */
  invoke(request: ToolInvocation): Promise<ToolInvocationResult>;
}

export const agentTools = serviceRef<AgentTools>('agents.tools');

export interface ToolCallInfo {
  agent: AgentRecord;
  sessionId: string;
  turnId: string;
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  workspace: string;
}

export interface TurnInfo {
  agent: AgentRecord;
  sessionId: string;
  turnId: string;
  message: string;
  /** Where the turn came from (TurnRequest.origin): 'http', 'ws', 'agent_send', a channel... */
  origin?: string;
  /** True only when the local user sent the message through the service's own API; absent or false: untrusted input. */
  fromLocalUser?: boolean;
}

export interface TurnRecord extends TurnInfo {
  result: TurnResult;
  /** The user message and the final answer of this turn. */
  exchange: { user: string; assistant: string };
}

export interface ModelCallContext {
  agent: AgentRecord;
  sessionId: string;
  /** The latest user message of the turn. */
  userMessage: string;
  /** The turn this call belongs to, and where the turn came from (TurnRequest.origin). */
  turnId?: string;
  origin?: string;
  /** As TurnInfo.fromLocalUser: absent or false means the user message is untrusted input. */
  fromLocalUser?: boolean;
  /** System prompt about to be sent; taps may append (memory recall does). */
  system: string;
}

/** What is wrong with one field of a manifest: `field` is its TOML key path ('capabilities.tools', 'skills'). */
export interface ManifestProblem {
  field: string;
  message: string;
}

/**
 * A manifest checked before a spawn or a manifest update (agentHooks.checkManifest). The agents module checks the
 * provider, the model and the tools; a module that owns other names checks them and pushes a problem for each one
 * it does not know (skills: `skills`; mcp: `mcp_servers`). `unknownTools` are the tool names no contributed tool
 * has: a module that vouches for a name not listed yet removes it (mcp: `mcp_<server>_…` of a configured server
 * that has not connected); what is left is refused.
 */
export interface ManifestCheck {
  manifest: AgentManifest;
  unknownTools: Set<string>;
  problems: ManifestProblem[];
}

/** A spawn about to happen, for agentHooks.authorizeSpawn. */
export interface SpawnRequest {
  manifestToml: string;
  manifest: AgentManifest;
  /** The signed envelope sent with the spawn (POST /api/agents signed_manifest), as sent. */
  signedManifest?: string;
  /** Set when another agent spawns it (agent_spawn). */
  parentId?: string;
}

export const agentHooks = defineHooks('agents.hooks', () => ({
  /** May this agent be spawned? Answer `{ status, error }` to refuse (manifest signing checks here). */
  authorizeSpawn: new SyncBailHook<[SpawnRequest], { status: number; error: string } | undefined>(['spawn']),
  /** The parsed manifest before it becomes a record: taps may fill derived values (a profile's tools). */
  manifest: new SyncWaterfallHook<[AgentManifest]>(['manifest']),
  /** After `manifest`: the names a manifest uses are checked by the modules that own them (ManifestCheck). */
  checkManifest: new SyncHook<[ManifestCheck]>(['check']),
  /** Tool modules add their tools: (list) => [...list, ...mine]. Called when tools are listed. */
  tools: new SyncWaterfallHook<[ToolDefinition[]]>(['tools']),
  /**
   * May this tool call run? Answer `{ deny: reason }` to refuse it (the model gets the reason as the tool's
   * error result); undefined lets it run. A tap may wait (a human approval). Runs before beforeToolCall. `held`
   * says the call is not refused but waits for a human decision (the stream reports it as approval_pending).
   */
  authorizeToolCall: new AsyncSeriesBailHook<[ToolCallInfo], { deny: string; held?: HeldToolCall } | undefined>(['call']),
  /** Before each tool runs (checkpoints snapshot here; taps must bound their own time). */
  beforeToolCall: new AsyncSeriesHook<[ToolCallInfo]>(['call']),
  /** What the model gets back from a tool: taps may rewrite it (scan untrusted content, label it). */
  toolResult: new AsyncSeriesWaterfallHook<[ToolOutput, ToolCallInfo]>(['output', 'call']),
  afterToolCall: new AsyncParallelHook<[ToolCallInfo & { output: ToolOutput; ms: number }]>(['call']),
  /** Before a turn starts; return a refusal to stop it (budgets, quotas). */
  beforeTurn: new AsyncSeriesBailHook<[TurnInfo], { status: number; error: string } | undefined>(['turn']),
  /** Before each model call; the waterfall may rewrite the system prompt (memory recall). */
  beforeModelCall: new AsyncSeriesWaterfallHook<[ModelCallContext]>(['call']),
  /** After a turn finished (memory extraction, audit). Runs off the request path. */
  afterTurn: new AsyncParallelHook<[TurnRecord]>(['turn']),
  agentSpawned: new SyncHook<[AgentRecord]>(['agent']),
  agentTerminated: new SyncHook<[AgentRecord]>(['agent']),
  messageReceived: new SyncHook<[TurnInfo]>(['turn']),
}));

// ------------------------------------------------------------------ events

export const agentEvents = defineEvents('agents', {
  'agent.spawned': payload<{ agentId: string; name: string; parentId?: string }>(),
  'agent.terminated': payload<{ agentId: string; name: string }>(),
  'agent.crashed': payload<{ agentId: string; name: string; error: string }>(),
  'message.received': payload<{ agentId: string; sessionId: string; turnId: string; message: string; origin?: string }>(),
  'turn.completed': payload<{
    agentId: string;
    sessionId: string;
    turnId: string;
    response: string;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    origin?: string;
  }>(),
  /** `direct`: POST /api/tools/{name}/invoke, not a call inside a turn. */
  'tool.invoked': payload<{ agentId?: string; sessionId?: string; turnId?: string; tool: string; isError: boolean; ms: number; direct?: boolean }>(),
});
