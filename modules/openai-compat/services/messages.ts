import { openAiError } from './errors.ts';

export interface ContentPart {
  type: string;
  text?: string;
  image_url?: { url: string } | string;
}

export interface ChatMessageInput {
  role: string;
  content?: string | ContentPart[] | null;
}

export interface TurnInput {
  message: string;
  images: Array<{ mediaType: string; data: string }>;
}

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,([A-Za-z0-9+/=\s]*)$/;

/**
 * The agent turn comes from the last user message only: its text parts
 * joined by newlines and its data-URL images. Earlier messages are not
 * replayed: the agent keeps its own conversation in its session.
 */
export function lastUserTurn(messages: ChatMessageInput[] | undefined): TurnInput {
  if (!messages?.length) throw openAiError(400, "'messages' must be a non-empty array", 'missing_message');
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) throw openAiError(400, "'messages' holds no message with role 'user'", 'missing_message');
  if (typeof last.content === 'string' || last.content == null) return { message: last.content ?? '', images: [] };
  const texts: string[] = [];
  const images: TurnInput['images'] = [];
  for (const part of last.content) {
    if (part.type === 'text') texts.push(part.text ?? '');
    else if (part.type === 'image_url') images.push(inlineImage(typeof part.image_url === 'string' ? part.image_url : part.image_url?.url));
    else throw openAiError(400, `unsupported content part type '${part.type}': use 'text' or 'image_url'`, 'invalid_content');
  }
  return { message: texts.join('\n'), images };
}

function inlineImage(url: string | undefined): { mediaType: string; data: string } {
  if (!url) throw openAiError(400, "an image_url part needs 'image_url.url'", 'invalid_image_url');
  if (/^https?:\/\//i.test(url))
    throw openAiError(400, 'remote image URLs are not supported: send the image as a base64 data URL (data:image/png;base64,...)', 'invalid_image_url');
  const m = DATA_URL.exec(url);
  if (!m) throw openAiError(400, 'image_url.url must be a base64 data URL (data:<media type>;base64,<data>)', 'invalid_image_url');
  if (!m[1].startsWith('image/')) throw openAiError(400, `image_url media type '${m[1]}' is not an image`, 'invalid_image_url');
  return { mediaType: m[1], data: m[3].replace(/\s+/g, '') };
}
