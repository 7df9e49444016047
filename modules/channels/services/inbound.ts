/**
 * From the journal to the agent: policy, slash commands, routing, adoption into the session (in the transaction that
 * marks the row adopted), the turn (a lane job of the tasks queue, typing shown while it runs), and the reply queued as
 * chunk rows in the transaction that marks the message answered.
 */
import type { Logger } from 'pino';
import type { Store } from '@talon/module-sdk';
import type { AgentRecord, AgentRegistry, AgentRunner, SessionStore, StoredFile, UploadFiles } from '@talon/agents';
import type { BindingRouter } from '@talon/bindings';
import type { CommandRegistry } from '@talon/commands';
import type { TaskQueue } from '@talon/tasks';
import type { InboundMessage, OutboundChunk, OutboundMedia } from '@talon/channels';
import type { InboundRow, Journal } from './journal.ts';
import type { Outbound } from './outbound.ts';
import type { Pairing } from './pairing.ts';
import { refusal, type Refusal, type SenderRateLimit } from './policy.ts';
import { TypingController } from '../kit/typing.ts';
import { placeMedia, replyMedia, userMessage } from './media.ts';
import { awaitBurst, joinMessages } from './burst.ts';
import { chunksFor } from './render.ts';
import type { Runtime } from './runtime.ts';

/** Turns of an adopted message tried again after their process died, before the row is failed. */
const MAX_TURN_ATTEMPTS = 3;
const TYPING_REFRESH_MS = 4_000;

export interface InboundDeps {
  store: Store;
  journal: Journal;
  runtime: Runtime;
  outbound: Outbound;
  pairing: Pairing;
  rateLimit: SenderRateLimit;
  registry(): AgentRegistry;
  runner(): AgentRunner;
  sessions(): SessionStore;
  /** The upload store: the files a reply's tools made are read from it. */
  files(): Pick<UploadFiles, 'read'>;
  queue(): TaskQueue;
  bindings(): BindingRouter | undefined;
  commands(): CommandRegistry | undefined;
  notAfterMs(): number;
  onRefused(row: InboundRow, reason: Refusal): void;
  onPairing(channel: string, senderId: string, senderName?: string): void;
  /** Tells the process running the channel that chunks were queued for it (this process is on standby). */
  handOver(channel: string): Promise<void>;
  /** Keeps work that outlives its caller known to the module, which waits for it when stopping. */
  track(work: Promise<unknown>): void;
  log: Logger;
  signal: AbortSignal;
}

export class Inbound {
  /** One worker per (channel, chat, thread): a session's messages are adopted and answered in order. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Command state per chat (`/think` keeps its switch here). */
  private readonly commandState = new Map<string, Record<string, unknown>>();

  constructor(private readonly deps: InboundDeps) {}

  /** Works on a journal row of this process in its conversation's order; resolves when it ended. */
  handle(row: Pick<InboundRow, 'id' | 'channel' | 'chat_id' | 'thread_id'>): Promise<void> {
    const key = `${row.channel}\u0000${row.chat_id}\u0000${row.thread_id}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.process(row.id));
    const settled = next.catch((err: unknown) => this.deps.log.error({ err, id: row.id }, 'channel message failed'));
    this.chains.set(key, settled);
    void settled.then(() => {
      if (this.chains.get(key) === settled) this.chains.delete(key);
    });
    return settled;
  }

  private async process(id: string): Promise<void> {
    const row = await this.deps.journal.inbound(id);
    if (!row || this.deps.signal.aborted) return;
    const message = JSON.parse(row.payload) as InboundMessage;
    if (row.state === 'adopted') return this.resume(row, message);
    if (row.state !== 'received') return;
    const running = this.deps.runtime.get(row.channel);
    const settings = running?.settings;
    if (!running || !settings) return this.deps.journal.settle(id, 'failed', 'the channel is not configured');

    const refused =
      refusal(message, settings.common, message.isGroup ? false : await this.deps.pairing.approved(row.channel, message.senderId)) ??
      (this.deps.rateLimit.take(row.channel, message.senderId) ? undefined : 'rate_limited');
    if (refused) {
      await this.deps.journal.settle(id, 'refused', refused);
      this.deps.onRefused(row, refused);
      if (refused === 'pairing') await this.askPairing(row, message);
      return;
    }

    const agent = this.route(row.channel, message, settings.common.agent_name);
    if (!agent) return this.deps.journal.settle(id, 'failed', 'no agent to route the message to');

    const command = this.deps.commands()?.parse(message.text);
    if (command) return this.command(row, message, agent, command);

    const burst = await awaitBurst(row, {
      journal: this.deps.journal,
      windowMs: settings.common.message_coalesce_window_ms,
      admits: (m) => m.senderId === message.senderId && !refusal(m, settings.common, !m.isGroup) && !this.deps.commands()?.parse(m.text),
      signal: this.deps.signal,
    });
    const adopted = await this.adopt(row, message, agent, burst);
    if (adopted) await this.turn(row, adopted.message, agent.id, adopted.id);
  }

  /** bindings first, then the channel's agent_name, then the default agent (the oldest). */
  private route(channel: string, m: InboundMessage, agentName: string | undefined): AgentRecord | undefined {
    const registry = this.deps.registry();
    const find = (who: string) => registry.get(who.toLowerCase()) ?? registry.findByName(who);
    const bound = this.deps.bindings()?.route({ channel, account_id: m.accountId, peer_id: m.senderId, guild_id: m.guildId, roles: m.roles });
    if (bound && find(bound)) return find(bound);
    if (agentName) return find(agentName);
    return registry.list()[0];
  }

  /**
   * The message (with the burst joining it) becomes the session's user message in the transaction that marks the row
   * adopted and the joined rows answered. Resolves with the session and the message as adopted.
   */
  private async adopt(
    row: InboundRow,
    m: InboundMessage,
    agent: AgentRecord,
    burst: Array<{ row: InboundRow; message: InboundMessage }>,
  ): Promise<{ id: string; message: InboundMessage } | undefined> {
    const sessions = this.deps.sessions();
    // The previous turn's reply is written behind: it goes in first, or this message would precede it in the session.
    await sessions.settled();
    return this.deps.store.tx(async (t) => {
      const key = { channel: row.channel, chatId: row.chat_id, threadId: row.thread_id, agentId: agent.id };
      const label = `${row.channel}:${row.chat_id}${row.thread_id ? `:${row.thread_id}` : ''}`.slice(0, 120);
      const sessionId = await this.deps.journal.sessionFor(t, key, () => sessions.create(agent.id, label, t));
      if (!(await this.deps.journal.markAdopted(t, row.id, agent.id, sessionId))) return undefined;
      const joined: InboundMessage[] = [];
      for (const j of burst) if (await this.deps.journal.markJoined(t, j.row.id, row.id)) joined.push(j.message);
      const message = joinMessages(m, joined);
      const { text, blocks } = userMessage(message);
      await sessions.appendUser(t, sessionId, text, blocks);
      return { id: sessionId, message };
    });
  }

  /** An adopted message whose process died before the answer: its turn runs again, never its adoption. */
  private async resume(row: InboundRow, m: InboundMessage): Promise<void> {
    if (!row.agent_id || !row.session_id) return this.deps.journal.settle(row.id, 'failed', 'adopted without a session');
    if (row.attempts >= MAX_TURN_ATTEMPTS) return this.deps.journal.settle(row.id, 'failed', `its turn was started ${row.attempts} times`);
    await this.deps.store.run('UPDATE channels_inbound SET attempts = attempts + 1 WHERE id = ?', [row.id]);
    await this.turn(row, m, row.agent_id, row.session_id);
  }

  private async turn(row: InboundRow, m: InboundMessage, agentId: string, sessionId: string): Promise<void> {
    const stopTyping = this.typing(row.channel, { chatId: m.chatId, threadId: m.threadId });
    let response: string;
    let files: StoredFile[];
    try {
      const result = await this.deps
        .queue()
        .run('channel', () =>
          this.deps.runner().run({ agentId, sessionId, message: userMessage(m).text, messageInSession: true, origin: row.channel, signal: this.deps.signal }),
        );
      // Stopping cut the turn short: the row stays adopted and the next process runs the turn again.
      if (this.deps.signal.aborted) return;
      response = result.response;
      files = result.files ?? [];
    } catch (err) {
      if (this.deps.signal.aborted) return; // stopping: the row stays adopted and is resumed by the next process
      return this.deps.journal.settle(row.id, 'failed', (err as Error).message);
    } finally {
      stopTyping();
    }
    await this.reply(row, m, response, files);
  }

  private async command(row: InboundRow, m: InboundMessage, agent: AgentRecord, command: { name: string; args: string }): Promise<void> {
    const key = `${row.channel}\u0000${row.chat_id}\u0000${row.thread_id}`;
    let state = this.commandState.get(key);
    if (!state) this.commandState.set(key, (state = {}));
    const result = await this.deps
      .commands()!
      .run(command.name, { agentId: agent.id, args: command.args, state })
      .catch((err: unknown) => ({ message: (err as Error).message }));
    await this.reply(row, m, result.message);
  }

  private async askPairing(row: InboundRow, m: InboundMessage): Promise<void> {
    const { code, fresh } = await this.deps.pairing.request(row.channel, m.senderId, m.senderName);
    if (!fresh) return; // asked once: a sender writing on does not get the code again and again
    this.deps.onPairing(row.channel, m.senderId, m.senderName);
    await this.send(
      row.channel,
      { chatId: m.chatId, threadId: m.threadId },
      `This bot answers approved senders only. Pairing code: ${code} — ask its owner to approve it.`,
    );
  }

  /**
   * Queues the reply's chunks (the files its tools made after the text: uploads, or notes naming them where they cannot
   * go out) and marks the message answered in one transaction, then sends them.
   */
  private async reply(row: InboundRow, m: InboundMessage, text: string, files: readonly StoredFile[] = []): Promise<void> {
    const running = this.deps.runtime.get(row.channel);
    const empty = !text.trim() && !files.length;
    if (!running || empty) return this.deps.journal.settle(row.id, 'answered', empty ? 'empty reply' : 'the channel stopped');
    const media = await replyMedia(files, running.adapter.capabilities.media, this.deps.files());
    const placed = placeMedia(text, media.uploads, media.notes);
    const chunks = chunksFor(placed.text, running.adapter.limits, { chatId: m.chatId, threadId: m.threadId, replyTo: m.platformId }, placed.uploads);
    // The conversation's next message need not wait for this reply to reach the platform (its send limiter may hold it
    // for seconds): the outbound side keeps the chat's replies in order on its own.
    const { delivered } = await this.queue(row.channel, m.chatId, chunks, row.id);
    this.deps.track(delivered);
  }

  /**
   * Queues a reply's chunks (answering `inboundId` in the same transaction) and starts sending them, or, when another
   * process runs the channel, leaves them to it. Resolves once queued, with the reply's id and its delivery (ended
   * when every chunk was sent or failed, or once handed over).
   */
  private async queue(channel: string, chatId: string, chunks: OutboundChunk[], inboundId?: string): Promise<{ replyId: string; delivered: Promise<void> }> {
    const handOver = this.deps.runtime.get(channel)?.state === 'standby';
    const replyId = await this.deps.store.tx((t) =>
      this.deps.journal.queueReply(t, { channel, chatId, inboundId, chunks, notAfter: Date.now() + this.deps.notAfterMs(), handOver }),
    );
    const delivered = handOver ? this.deps.handOver(channel) : this.deps.outbound.deliver(replyId, `${channel}\u0000${chatId}`);
    return { replyId, delivered };
  }

  /**
   * A message not answering an inbound one (a test, a pairing code, a background reply, an owner notice), with files
   * already checked against the channel (mediaProblem): uploads as chunks of their own, links in the text.
   */
  async send(channel: string, target: { chatId: string; threadId?: string }, text: string, media: readonly OutboundMedia[] = []): Promise<string> {
    const running = this.deps.runtime.get(channel);
    if (!running) throw new Error(`channel '${channel}' is not loaded`);
    const placed = placeMedia(text, media);
    const { replyId, delivered } = await this.queue(channel, target.chatId, chunksFor(placed.text, running.adapter.limits, target, placed.uploads));
    await delivered;
    return replyId;
  }

  /**
   * The turn's typing indicator (the kit's controller: calls never overlap, a failing indicator never fails the turn,
   * capped at 10 minutes); the returned function stops it and is called in the turn's finally.
   */
  private typing(channel: string, target: { chatId: string; threadId?: string }): () => void {
    const running = this.deps.runtime.get(channel);
    const connection = running?.connection;
    if (!connection?.typing || !running?.adapter.capabilities.typing) return () => undefined;
    const controller = new TypingController(
      { start: () => connection.typing!(target) },
      { refreshMs: TYPING_REFRESH_MS, onError: (err) => this.deps.log.debug({ err, channel }, 'typing indicator failed') },
    );
    controller.start();
    return () => void controller.stop();
  }
}
