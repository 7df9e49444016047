import path from 'node:path';
import { startAgentTestKernel, waitFor, type AgentTestKernel, type ScriptedReply } from '@talon/testing';
import type { InboundMessage, OutboundChunk } from '@talon/channels';

export const fixtures = path.join(import.meta.dirname, 'fixtures');

export async function startChannels(options: { script?: ScriptedReply[]; config?: string; home?: string; keepHome?: boolean } = {}): Promise<AgentTestKernel> {
  return startAgentTestKernel({
    only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-fake'],
    config: `module_paths = ["${fixtures}"]\n${options.config ?? ''}`,
    script: options.script,
    ...(options.home ? { home: options.home } : {}),
    keepHome: options.keepHome,
  });
}

export type Sent = OutboundChunk & { messageId: string };

export async function sent(k: AgentTestKernel): Promise<Sent[]> {
  return ((await (await k.request('/api/test-fake/sent')).json()) as { sent: Sent[] }).sent;
}

export async function inject(k: AgentTestKernel, m: Partial<InboundMessage> & { platformId: string; text: string }): Promise<{ duplicate: boolean }> {
  const res = await k.request('/api/test-fake/inject', { method: 'POST', json: { chatId: 'c1', senderId: 'u1', isGroup: false, ...m } });
  return (await res.json()) as { duplicate: boolean };
}

export async function configure(k: AgentTestKernel, body: Record<string, unknown>): Promise<Response> {
  return k.request('/api/channels/fake/configure', { method: 'POST', json: body });
}

export const until = <T>(fn: () => Promise<T>, what: string) => waitFor(fn, 10_000, what);
