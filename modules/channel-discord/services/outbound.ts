/**
 * One chunk → one POST /channels/{id}/messages: the text, and the chunk's file as an upload (multipart `files[0]` with
 * `payload_json`, built by @discordjs/rest), with the journal row's nonce Discord enforces, into the chunk's thread (a
 * channel of its own on Discord) and as a reply to the message it answers.
 */
import { createHash } from 'node:crypto';
import type { ChannelConnection, OutboundChunk } from '@talon/channels';
import { fromDiscord } from './errors.ts';
import type { DiscordRest } from './rest.ts';

/** Ids of the bot's recent messages, so a reply to one counts as a mention when Discord omits referenced_message. */
const SENT_IDS_KEPT = 1000;

/** Discord takes a nonce of at most 25 characters; the journal row's id is longer, so a digest of it stands in. */
export const discordNonce = (rowNonce: string) => createHash('sha256').update(rowNonce).digest('base64url').slice(0, 25);

/** The ids of the messages the bot sent lately. */
export class SentIds {
  private readonly ids = new Set<string>();
  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > SENT_IDS_KEPT) this.ids.delete(this.ids.values().next().value!);
  }
  has = (id: string): boolean => this.ids.has(id);
}

/** The chunk's file as @discordjs/rest's RawFile: only content is uploaded (links went into the text already). */
const filesOf = (chunk: OutboundChunk) =>
  chunk.media?.data !== undefined ? [{ name: chunk.media.name, contentType: chunk.media.mediaType, data: Buffer.from(chunk.media.data, 'base64') }] : [];

export function discordSender({ api, request }: DiscordRest, sent: SentIds): Required<Pick<ChannelConnection, 'send' | 'typing'>> {
  return {
    async send(chunk: OutboundChunk) {
      const files = filesOf(chunk);
      try {
        const message = await api.channels.createMessage(
          chunk.threadId ?? chunk.chatId,
          {
            content: chunk.text,
            ...(files.length ? { files } : {}),
            // The row's nonce with enforce_nonce: a chunk re-sent after a crash returns the message it created.
            nonce: discordNonce(chunk.nonce),
            enforce_nonce: true,
            // Model output never pings: no @everyone, roles or users, and a reply does not notify its author.
            allowed_mentions: { parse: [], replied_user: false },
            ...(chunk.replyTo ? { message_reference: { message_id: chunk.replyTo, fail_if_not_exists: false } } : {}),
          },
          request(),
        );
        sent.add(message.id);
        return { messageId: message.id };
      } catch (err) {
        throw fromDiscord(err);
      }
    },
    async typing(target) {
      await api.channels.showTyping(target.threadId ?? target.chatId, request()).catch((err: unknown) => {
        throw fromDiscord(err);
      });
    },
  };
}
