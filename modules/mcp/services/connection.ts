/**
 * One supervised connection to an MCP server through the official SDK client:
 * connect and list tools (bounded), follow tools/list_changed, and after a
 * failure or a lost connection retry with a doubling delay. The reason of the
 * last failure (with the last stderr lines of a stdio server) stays readable
 * for GET /api/mcp/health: a server that never connects says why.
 */
import type { Logger } from 'pino';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { lazy, type JsonSchema } from '@talon/module-sdk';
import { expandArgs, type ServerSpec } from './spec.ts';
import { killTree, processTree } from './process-tree.ts';

/** The SDK's client side (and zod under it) costs start-up time and memory: loaded with the first connection. */
const clientSdk = lazy(() => importClientSdk());
type ClientSdk = Awaited<ReturnType<typeof importClientSdk>>;
async function importClientSdk() {
  const [{ Client }, { StdioClientTransport }, { SSEClientTransport }, { StreamableHTTPClientTransport }, { ToolListChangedNotificationSchema }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  return { Client, StdioClientTransport, SSEClientTransport, StreamableHTTPClientTransport, ToolListChangedNotificationSchema };
}

export type ServerStatus = 'connecting' | 'connected' | 'error' | 'stopped';

export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface ConnectionDeps {
  log: Logger;
  clientVersion: string;
  connectTimeoutMs: () => number;
  reconnectBaseMs: () => number;
  reconnectMaxMs: () => number;
  /** The tool list changed (connected, lost, list_changed). */
  onTools: () => void;
  setTimeout: (fn: () => unknown, ms: number) => NodeJS.Timeout;
}

const STDERR_TAIL = 5;
const KILL_GRACE_MS = 1500;

export class Connection {
  status: ServerStatus = 'stopped';
  tools: RemoteTool[] = [];
  lastError?: string;
  lastOk?: string;
  connectedSince?: string;
  consecutiveFailures = 0;
  reconnectAttempts = 0;
  nextRetryAt?: string;
  private client?: Client;
  private transport?: Transport;
  /** The transport when it is a stdio child (for its pid). */
  private stdio?: StdioClientTransport;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  private readonly stderrTail: string[] = [];

  constructor(
    readonly spec: ServerSpec,
    private readonly deps: ConnectionDeps,
  ) {}

  /** The stdio child's pid while it runs. */
  pid(): number | undefined {
    return this.stdio?.pid ?? undefined;
  }

  /** One attempt; a failure schedules the next. Resolves when this attempt is over. */
  async connect(): Promise<void> {
    if (this.stopped) return;
    clearTimeout(this.retry);
    this.nextRetryAt = undefined;
    await this.dispose();
    this.status = 'connecting';
    this.stderrTail.length = 0;
    const sdk = await clientSdk();
    if (this.stopped) return;
    const transport = this.makeTransport(sdk);
    const client = new sdk.Client({ name: 'talon', version: this.deps.clientVersion }, { capabilities: {} });
    this.client = client;
    this.transport = transport;
    this.stdio = transport instanceof sdk.StdioClientTransport ? transport : undefined;
    client.onclose = () => {
      if (this.client === client) this.failed(new Error('the connection closed'));
    };
    client.onerror = (err) => this.deps.log.debug({ err, server: this.spec.name }, 'MCP transport error');
    try {
      await client.connect(transport, { timeout: this.deps.connectTimeoutMs() });
      const tools = await this.listTools(client);
      if (this.client !== client) return;
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void this.refresh(client));
      this.tools = tools;
      this.status = 'connected';
      this.lastOk = this.connectedSince = new Date().toISOString();
      this.consecutiveFailures = 0;
      this.reconnectAttempts = 0;
      this.lastError = undefined;
      this.deps.log.info({ server: this.spec.name, tools: tools.length }, 'MCP server connected');
      this.deps.onTools();
    } catch (err) {
      if (this.client === client) this.failed(err as Error);
    }
  }

  async call(tool: string, args: Record<string, unknown>, timeoutMs: number, signal: AbortSignal): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.status !== 'connected')
      throw new Error(`MCP server '${this.spec.name}' is not connected${this.lastError ? `: ${this.lastError}` : ''}`);
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs, signal });
    this.lastOk = new Date().toISOString();
    return result as CallToolResult;
  }

  /** For good: no reconnect; a stdio server is killed with its process tree. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.dispose();
    this.status = 'stopped';
  }

  private async listTools(client: Client): Promise<RemoteTool[]> {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.deps.connectTimeoutMs() });
      for (const t of page.tools) tools.push({ name: t.name, description: t.description ?? '', inputSchema: usableSchema(t.inputSchema) });
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  private async refresh(client: Client): Promise<void> {
    try {
      const tools = await this.listTools(client);
      if (this.client !== client) return;
      this.tools = tools;
      this.deps.onTools();
    } catch (err) {
      this.deps.log.warn({ err, server: this.spec.name }, 'MCP tools/list after list_changed failed');
    }
  }

  private failed(err: Error): void {
    const stderr = this.stderrTail.length ? ` (stderr: ${this.stderrTail.join(' | ')})` : '';
    this.lastError = `${err.message}${stderr}`;
    this.status = 'error';
    this.consecutiveFailures++;
    this.connectedSince = undefined;
    const hadTools = this.tools.length > 0;
    this.tools = [];
    if (hadTools) this.deps.onTools();
    this.deps.log.warn({ server: this.spec.name, error: this.lastError }, 'MCP server failed');
    void this.dispose();
    if (this.stopped) return;
    const delay = Math.min(this.deps.reconnectBaseMs() * 2 ** (this.consecutiveFailures - 1), this.deps.reconnectMaxMs());
    this.nextRetryAt = new Date(Date.now() + delay).toISOString();
    this.retry = this.deps.setTimeout(() => {
      this.reconnectAttempts++;
      void this.connect();
    }, delay);
  }

  /** Closes the current client; a stdio child goes with its whole process tree. */
  private async dispose(): Promise<void> {
    const { client, transport, stdio } = this;
    this.client = undefined;
    this.transport = undefined;
    this.stdio = undefined;
    if (!client || !transport) return;
    const pid = stdio?.pid;
    const tree = pid ? processTree(pid) : [];
    await Promise.all([tree.length ? killTree(tree, KILL_GRACE_MS) : undefined, client.close().catch(() => undefined)]);
  }

  private makeTransport(sdk: ClientSdk): Transport {
    const { transport, env, headers, name } = this.spec;
    if (transport.type === 'stdio') {
      const stdio = new sdk.StdioClientTransport({ command: transport.command!, args: expandArgs(transport.args, env), env, stderr: 'pipe' });
      stdio.stderr?.on('data', (chunk: Buffer) => this.stderr(chunk.toString('utf8')));
      return stdio;
    }
    const url = new URL(transport.url!);
    const requestInit = { headers };
    this.deps.log.debug({ server: name, type: transport.type }, 'MCP connecting over HTTP');
    return transport.type === 'sse' ? new sdk.SSEClientTransport(url, { requestInit }) : new sdk.StreamableHTTPClientTransport(url, { requestInit });
  }

  private stderr(text: string): void {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (!trimmed) continue;
      this.deps.log.info({ server: this.spec.name, stderr: trimmed.slice(0, 2000) }, 'MCP server stderr');
      this.stderrTail.push(trimmed.slice(0, 300));
      if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift();
    }
  }
}

/** Tool schemas are sent to models and compiled by the tool runner: an object schema without a $schema dialect tag. */
function usableSchema(schema: Record<string, unknown>): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return { ...rest, type: 'object', properties: (rest.properties as Record<string, unknown> | undefined) ?? {} } as JsonSchema;
}
