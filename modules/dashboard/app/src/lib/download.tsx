/**
 * Saves a file the API serves: fetched with the key in its header (a plain link would need it in the URL), then
 * handed to the browser as a download from memory.
 */
import { request } from './api.tsx';

export async function download(path: string, filename: string): Promise<void> {
  const blob = await (await request(path)).blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.click();
  // The click starts the download at once; the URL is released after it has been read.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
