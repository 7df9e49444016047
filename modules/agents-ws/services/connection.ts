import type { WebSocket } from 'ws';
import type { FastifyBaseLogger } from 'fastify';
import type { AgentRecord, AgentRegistry, AgentRunner } from '@talon/agents';
import type { CommandRegistry } from '@talon/commands';
import { parseFrame, slashCommand } from './protocol.ts';

export interface ConnectionDeps {
  registry(): AgentRegistry;
  runner(): AgentRunner;
  /** Slash commands: the one registry every chat surface dispatches through; undefined while the commands module is off. */
  commands(): CommandRegistry | undefined;
  intervalMs: number;
  log: FastifyBaseLogger;
}

/** Agent summary as agents_updated carries it (the list item without created_at). */
function summary(a: AgentRecord) {
  return { id: a.id, name: a.name, state: a.state, model_provider: a.model.provider, model_name: a.model.model };
}

/** One chat socket: frames in, turn events out, a periodic agents_updated; everything released on close. */
export class ChatConnection {
  private turn?: AbortController;
  /** What commands keep for this conversation (see CommandCall.state). */
  private readonly commandState: Record<string, unknown> = {};
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly agentId: string,
    private readonly deps: ConnectionDeps,
  ) {
    this.send({ type: 'connected', agent_id: agentId });
    this.timer = setInterval(() => this.agentsUpdated(), deps.intervalMs);
    socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => void this.receive(frameText(data)));
    socket.on('close', () => this.dispose());
    socket.on('error', (err: Error) => deps.log.debug({ err }, 'websocket error'));
  }

  /** Sends the agent list now (on the timer, and when an agent was spawned or killed here or by another process). */
  agentsUpdated(): void {
    this.send({ type: 'agents_updated', agents: this.deps.registry().list().map(summary) });
  }

  /** Closes the socket (module stop). */
  close(code: number, reason: string): void {
    this.dispose();
    this.socket.close(code, reason);
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    // The client left: a turn it started has nobody to answer.
    this.turn?.abort();
    this.socket.removeAllListeners('message');
  }

  private send(frame: Record<string, unknown>): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify(frame));
  }

  private async receive(text: string): Promise<void> {
    const commands = this.deps.commands();
    const frame = parseFrame(text, (content) => (commands ? commands.parse(content) : slashCommand(content)));
    switch (frame.kind) {
      case 'ping':
        return this.send({ type: 'pong' });
      case 'invalid':
        return this.send({ type: 'error', content: frame.error });
      case 'command':
        // The person meant a command: sent to the agent as text it would only confuse the conversation.
        if (!commands) return this.send({ type: 'error', content: `/${frame.name} was not run: commands are off (the commands module is not running)` });
        try {
          const call = { agentId: this.agentId, args: frame.args, state: this.commandState };
          const result = await commands.run(frame.name, call);
          return this.send({ type: 'command_result', command: frame.name, ...result });
        } catch (err) {
          return this.send({ type: 'error', content: (err as Error).message });
        }
      case 'message':
        return this.chat(frame.content);
    }
  }

  private async chat(content: string): Promise<void> {
    if (this.turn) return this.send({ type: 'error', content: 'a turn is already running: wait for its response or send /stop' });
    const controller = new AbortController();
    this.turn = controller;
    this.send({ type: 'thinking' });
    try {
      const result = await this.deps.runner().run({ agentId: this.agentId, message: content, signal: controller.signal, origin: 'ws' }, (event) => {
        if (event.type === 'text_delta') this.send({ type: 'text_delta', content: event.content });
        else if (event.type === 'tool_use') this.send({ type: 'tool_start', tool: event.tool });
        // Private to the owner, apart from the chat (the SSE stream's owner_notice event).
        else if (event.type === 'owner_notice') this.send({ type: 'owner_notice', content: event.text });
      });
      this.send({
        type: 'response',
        content: result.response,
        input_tokens: result.inputTokens,
        output_tokens: result.outputTokens,
        iterations: result.iterations,
        cost_usd: result.costUsd,
        // Files the agent's tools made (generated media), as the HTTP reply and the SSE done event carry them.
        ...(result.files?.length && { files: result.files }),
      });
    } catch (err) {
      const status = (err as { statusCode?: unknown }).statusCode;
      this.send({ type: 'error', content: (err as Error).message, ...(typeof status === 'number' ? { status } : {}) });
    } finally {
      this.turn = undefined;
    }
  }
}

function frameText(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
