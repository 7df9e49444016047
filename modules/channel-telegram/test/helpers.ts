import { startAgentTestKernel, startTelegramFake, waitFor, type AgentTestKernel, type ScriptedReply, type TelegramFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-telegram'];

export interface Env {
  k: AgentTestKernel;
  tg: TelegramFake;
  stop(): Promise<void>;
}

/** A kernel with the channels module and this adapter, an agent, and the Telegram fake configured as its server. */
export async function startTelegramEnv(options: { script?: ScriptedReply[]; configure?: Record<string, unknown> } = {}): Promise<Env> {
  const tg = await startTelegramFake();
  const k = await startAgentTestKernel({ only: MODULES, script: options.script });
  try {
    await k.spawnAgent('helper');
    await configure(k, { token: tg.token, api_url: tg.apiRoot, dm_policy: 'open', ...options.configure });
    await waitFor(async () => (await channel(k)).state === 'connected', 10_000, 'telegram connected');
  } catch (err) {
    await k.stop();
    await tg.stop();
    throw err;
  }
  return {
    k,
    tg,
    async stop() {
      await k.stop();
      await tg.stop();
    },
  };
}

export async function configure(k: AgentTestKernel, body: Record<string, unknown>): Promise<void> {
  const res = await k.request('/api/channels/telegram/configure', { method: 'POST', json: body });
  if (res.status !== 200) throw new Error(`configure answered ${res.status}: ${await res.text()}`);
}

export async function channel(k: AgentTestKernel): Promise<{ state: string; last_error: string | null }> {
  return (await (await k.request('/api/channels/telegram')).json()) as { state: string; last_error: string | null };
}

/** The messages the bot sent into a chat, oldest first. */
export const sentTo = (tg: TelegramFake, chatId: number) => tg.sent.filter((m) => (m.chat as { id: number }).id === chatId);

export const until = <T>(fn: () => T | Promise<T>, what: string, ms = 10_000) => waitFor(fn, ms, what);
