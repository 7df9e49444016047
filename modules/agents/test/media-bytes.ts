/** Small real media files for the upload store's tests (their types are sniffed from these bytes). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PNG_BASE64 } from './fixtures/file-tool-module/index.ts';

/** A 1×1 PNG. */
export const PNG = Buffer.from(PNG_BASE64, 'base64');
/** One second of H.264 video in an MP4. */
export const MP4 = readFileSync(path.resolve(import.meta.dirname, '../../../test/fixtures/media/sample.mp4'));
