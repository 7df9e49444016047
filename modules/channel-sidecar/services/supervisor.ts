/**
 * Supervises the sidecar program with the reference's restart policy: any exit is a failure, retried after an
 * exponential backoff (restart_initial_backoff_ms doubling up to restart_max_backoff_ms, plus up to 20 % jitter);
 * after restart_max_retries consecutive failures it gives up with the last cause as last_error; a run that lasted
 * restart_reset_after_secs resets the count. A program that sends no `ready` within ready_timeout_secs is killed.
 * The channel is `connected` from the program's `ready` (answered with `ready_ack`) until it exits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdapterContext, ChannelError, InboundMessage, OutboundChunk } from '@talon/channels';
import type { SandboxService } from '@talon/tools';
import type { SidecarSettings } from '../config.ts';
import { SidecarChild } from './child.ts';
import { PROTOCOL_VERSION, sendCommand, type SidecarEvent } from './frames.ts';
import type { QrState } from './qr.ts';

export function channelError(kind: ChannelError['kind'], message: string): ChannelError {
  return Object.assign(new Error(message), { name: 'ChannelError' as const, kind });
}

/** The wait before restart number `attempt` (0-based): the reference's exponential backoff with 0–20 % jitter. */
export function restartDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 20));
  return Math.round(base * (1 + 0.2 * random()));
}

export class Supervisor {
  /** The capabilities of the running program's `ready` (typing, thread, …); empty while none runs. */
  capabilities = new Set<string>();
  qr: QrState | undefined;
  /** The running program's account_id, for the bindings router. */
  private accountId: string | undefined;
  private child: SidecarChild | undefined;
  private ready = false;
  private loop: Promise<void> = Promise.resolve();
  /** Inbound messages are journaled one after another, in the order the program sent them. */
  private inbound: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: AdapterContext,
    private readonly settings: SidecarSettings,
    private readonly sandbox: () => SandboxService,
    private readonly cwd: string,
  ) {}

  start(): void {
    this.loop = this.supervise();
  }

  async send(chunk: OutboundChunk): Promise<{ messageId: string }> {
    const child = this.child;
    if (!child || !this.ready) throw channelError('transient', 'the sidecar program is not ready (starting or restarting)');
    await child.write(sendCommand(chunk.chatId, chunk.text, chunk.threadId)).catch((err: Error) => {
      throw channelError('transient', `the sidecar program did not take the message: ${err.message}`);
    });
    // Protocol v1 answers a send with nothing: the journal row's id stands for the platform's.
    return { messageId: chunk.nonce };
  }

  async typing(target: { chatId: string }): Promise<void> {
    if (this.child && this.ready && this.capabilities.has('typing'))
      await this.child.write({ method: 'typing', params: { channel_id: target.chatId } }).catch(() => undefined);
  }

  /** The signal has aborted: the running program is stopped politely and the loop ends. */
  async stop(): Promise<void> {
    await this.child?.stop(this.settings.graceMs);
    await this.loop;
  }

  private async supervise(): Promise<void> {
    const { restart } = this.settings;
    const { signal } = this.ctx;
    let failures = 0;
    while (!signal.aborted) {
      const started = Date.now();
      const cause = await this.runOnce();
      if (signal.aborted) break;
      if (Date.now() - started >= restart.resetAfterMs) failures = 0;
      if (failures >= restart.maxRetries) {
        this.ctx.report('error', `gave up after ${failures} consecutive failures; last: ${cause}`);
        this.ctx.log.error({ failures }, 'sidecar program keeps failing: not restarted again');
        break;
      }
      const delay = restartDelay(failures++, restart.initialMs, restart.maxMs);
      // Shown as last_error while it waits; the next start reports `connecting` again.
      this.ctx.report('error', cause);
      this.ctx.log.warn({ failures, delayMs: delay, cause }, 'sidecar program ended: restarting after backoff');
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }

  /** One run of the program; resolves with why it ended. */
  private async runOnce(): Promise<string> {
    this.ctx.report('connecting');
    let reported: string | undefined;
    let proc;
    try {
      proc = await this.sandbox().start({ argv: this.settings.argv, cwd: this.cwd, envPassthrough: [], env: this.settings.env });
    } catch (err) {
      return `the sidecar program could not be started: ${(err as Error).message}`;
    }
    const child = new SidecarChild(proc, {
      event: (event) => {
        if (event.method === 'error') reported = this.redact(event.message);
        this.onEvent(child, event);
      },
      log: (line) => this.ctx.log.info({ stderr: this.redact(line).slice(0, 500) }, 'sidecar program'),
    });
    this.child = child;
    const readyTimer = setTimeout(() => {
      if (this.ready) return;
      reported = `no ready from the sidecar program within ${this.settings.readyTimeoutMs / 1000} s: killed`;
      void child.kill();
    }, this.settings.readyTimeoutMs);
    const heartbeat = setInterval(() => void child.write({ method: 'heartbeat' }).catch(() => undefined), this.settings.heartbeatMs);
    heartbeat.unref();
    if (this.ctx.signal.aborted) void child.stop(this.settings.graceMs);
    const exit = await child.exited;
    clearTimeout(readyTimer);
    clearInterval(heartbeat);
    this.child = undefined;
    this.ready = false;
    this.capabilities = new Set();
    if (exit.error) return `the sidecar program could not be started: ${exit.error}`;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    return reported ? `${reported} (the program ${how})` : `the sidecar program ${how}`;
  }

  private onEvent(child: SidecarChild, event: SidecarEvent): void {
    switch (event.method) {
      case 'ready':
        if (this.ready || this.child !== child) return;
        this.ready = true;
        this.capabilities = new Set(event.capabilities);
        this.accountId = event.accountId;
        if (event.protocolVersion !== PROTOCOL_VERSION)
          this.ctx.log.warn({ declared: event.protocolVersion ?? null, ours: PROTOCOL_VERSION }, 'sidecar protocol version differs (running it anyway)');
        void child.write({ method: 'ready_ack' }).then(
          () => this.ctx.report('connected'),
          () => undefined,
        );
        return;
      case 'message':
        this.journal(event.message);
        return;
      case 'error':
        this.ctx.log.warn({ error: this.redact(event.message) }, 'sidecar program reported an error');
        return;
      case 'qr_ready':
        this.qr = { code: event.code, ...(event.expiresAt ? { expiresAt: event.expiresAt } : {}), status: 'pending' };
        return;
      case 'qr_status':
        if (this.qr) this.qr.status = event.status;
        else this.qr = { code: '', status: event.status };
        return;
      // The platform says someone is typing: the channels contract has no use for it. Unknown methods are tolerated.
      case 'typing':
      case 'unknown':
        return;
    }
  }

  /**
   * Protocol v1 has no acknowledgement of a message: it is committed to the journal as soon as it is read, and a
   * failed commit is logged (the program will not deliver it again).
   */
  private journal(message: InboundMessage): void {
    const accountId = this.accountId;
    const emit = () => this.ctx.emit(accountId ? { ...message, accountId } : message);
    this.inbound = this.inbound
      .then(emit)
      .catch((err: unknown) => this.ctx.log.error({ err, platformId: message.platformId }, 'sidecar message not journaled'));
  }

  /** Secret values never reach the log or last_error, whatever the program prints. */
  private redact(text: string): string {
    let out = text;
    for (const secret of Object.values(this.ctx.secrets)) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
    return out;
  }
}
