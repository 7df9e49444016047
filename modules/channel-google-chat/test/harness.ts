// The platform side of the Google Chat adapter's tests: the Chat fake, POSTing events signed as Chat signs them.
import { generateKeyPairSync } from 'node:crypto';
import { startGoogleChatFake, type AgentTestKernel, type ChannelHarness, type GoogleChatFake } from '@talon/testing';
import { EVENTS_ROUTE } from '../config.ts';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-google-chat'];

export const dmSpace = (n: number) => `spaces/dm${n}`;
export const groupSpace = (n: number) => `spaces/room${n}`;
export const threadOf = (n: number) => `${groupSpace(n)}/threads/th${n}`;

export function configureOf(chat: GoogleChatFake): Record<string, unknown> {
  return { token: chat.serviceAccountKey, project_number: chat.projectNumber, api_url: chat.apiRoot, token_url: chat.tokenUrl, jwks_url: chat.jwksUrl };
}

export const textsIn = (chat: GoogleChatFake, space: string, thread?: string) =>
  chat.messages.filter((m) => m.space === space && (!thread || m.thread === thread)).map((m) => m.text);

export async function googleChatHarness(kernel: () => AgentTestKernel): Promise<ChannelHarness & { chat: GoogleChatFake }> {
  const chat = await startGoogleChatFake();
  // The app's HTTP endpoint URL, known once the kernel runs.
  const inject = async (input: Parameters<GoogleChatFake['injectMessage']>[0]) => {
    chat.deliverTo(kernel().url + EVENTS_ROUTE);
    const status = await chat.injectMessage(input);
    if (status !== 200) throw new Error(`the event was answered ${status}`);
  };
  return {
    chat,
    configure: configureOf(chat),
    badCredentials: {
      token: JSON.stringify({ ...JSON.parse(chat.serviceAccountKey), client_email: 'someone-else@x.iam.gserviceaccount.com', private_key: strangerKey() }),
    },
    dm: (n, text) => inject({ space: dmSpace(n), dm: true, sender: `users/${n}`, text }),
    group: (n, text, { mentioned, thread }) =>
      inject({ space: groupSpace(n), dm: false, sender: `users/${500 + n}`, text, mentioned, ...(thread ? { thread } : {}) }),
    received: (target) => ('dm' in target ? textsIn(chat, dmSpace(target.dm)) : textsIn(chat, groupSpace(target.group), target.thread)),
    dmMedia: (n, file, text) =>
      inject({ space: dmSpace(n), dm: true, sender: `users/${n}`, text, attachments: [{ contentName: file.name ?? 'file', contentType: file.mediaType }] }),
    dmChat: dmSpace,
    thread: threadOf,
    rateLimitOnce: () => chat.rateLimitNext(),
    stop: () => chat.stop(),
  };
}

/** A private key the token endpoint does not know: a service account key deleted, or of another project. */
const strangerKey = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
    .privateKey;
