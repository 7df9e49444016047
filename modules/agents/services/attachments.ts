/**
 * Message rule 2 and 3: each attached file becomes a content block before the
 * model call. Images → base64 image blocks; PDFs → "[Attached PDF: name]" +
 * extracted text; text and code → "[Attached file: name]" + UTF-8 contents;
 * anything else is skipped with a warning.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { badRequest } from '@talon/module-sdk';
import type { ContentBlock } from '@talon/llm';
import type { UploadRow, UploadStore } from './uploads.ts';

export const MAX_EXTRACTED_CHARS = 200_000;

const TEXT_APPLICATION =
  /^application\/(json|ld\+json|x-ndjson|xml|[\w.+-]+\+xml|[\w.+-]+\+json|yaml|x-yaml|toml|x-toml|javascript|x-javascript|ecmascript|typescript|x-typescript|sql|graphql|x-sh|x-shellscript|x-python|x-httpd-php|x-ipynb\+json)$/;
const TEXT_EXTENSIONS = new Set(
  (
    'txt md markdown rst csv tsv log json jsonl ndjson yaml yml toml xml ini conf cfg env html htm css scss less js mjs cjs ts tsx jsx vue svelte ' +
    'py rs go java kt kts swift scala c cc cpp cxx h hpp cs rb php lua r sh bash zsh fish ps1 sql graphql gql proto ipynb tex diff patch properties gradle ' +
    'dart ex exs erl hs ml clj pl pm jl nim zig sol tf hcl'
  ).split(' '),
);
const TEXT_NAMES = new Set(['dockerfile', 'makefile', 'gemfile', 'rakefile', 'procfile', 'jenkinsfile', 'license', 'readme', 'vagrantfile', 'cmakelists.txt']);

export type FileClass = 'image' | 'pdf' | 'text' | 'other';

export function classify(filename: string, contentType: string): FileClass {
  const mime = contentType.split(';')[0].trim().toLowerCase();
  if (mime.startsWith('image/')) return 'image';
  if (mime === 'application/pdf') return 'pdf';
  if (mime.startsWith('text/') || TEXT_APPLICATION.test(mime)) return 'text';
  if (mime === '' || mime === 'application/octet-stream') {
    const base = path.basename(filename).toLowerCase();
    const ext = path.extname(base).slice(1);
    if (ext === 'pdf') return 'pdf';
    if (['png', 'jpg', 'jpeg', 'gif', 'webp'].includes(ext)) return 'image';
    if (TEXT_NAMES.has(base) || TEXT_EXTENSIONS.has(ext) || base.startsWith('.env') || base.startsWith('dockerfile')) return 'text';
  }
  return 'other';
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

export async function attachmentBlocks(agentId: string, fileIds: readonly string[], uploads: UploadStore, log: Logger): Promise<ContentBlock[]> {
  const blocks: ContentBlock[] = [];
  for (const fileId of fileIds) {
    const row = await uploads.get(fileId);
    if (!row || row.agent_id !== agentId) throw badRequest(`attachment '${fileId}' is not a file uploaded to this agent`);
    const block = await toBlock(row, await uploads.readRow(row), log);
    if (block) blocks.push(block);
  }
  return blocks;
}

async function toBlock(row: UploadRow, data: Buffer, log: Logger): Promise<ContentBlock | undefined> {
  switch (classify(row.filename, row.content_type)) {
    case 'image': {
      const mime = row.content_type.startsWith('image/')
        ? row.content_type.split(';')[0].trim()
        : IMAGE_TYPES[path.extname(row.filename).slice(1).toLowerCase()];
      return { type: 'image', mediaType: mime, data: data.toString('base64') };
    }
    case 'pdf': {
      const text = await pdfText(data, log);
      const body = text.trim() ? truncate(text) : '(No text could be extracted from this PDF: it may be scanned or contain only images.)';
      return { type: 'text', text: `[Attached PDF: ${row.filename}]\n${body}` };
    }
    case 'text':
      return { type: 'text', text: `[Attached file: ${row.filename}]\n${truncate(data.toString('utf8'))}` };
    default:
      log.warn({ file_id: row.id, filename: row.filename, content_type: row.content_type }, 'attachment skipped: not an image, PDF or text file');
      return undefined;
  }
}

async function pdfText(data: Buffer, log: Logger): Promise<string> {
  try {
    const { extractText, getDocumentProxy } = await import('unpdf');
    const pdf = await getDocumentProxy(new Uint8Array(data));
    const { text } = await extractText(pdf, { mergePages: true });
    return text;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'PDF text extraction failed');
    return '';
  }
}

function truncate(text: string): string {
  return text.length > MAX_EXTRACTED_CHARS ? `${text.slice(0, MAX_EXTRACTED_CHARS)}\n[truncated at ${MAX_EXTRACTED_CHARS} characters]` : text;
}
