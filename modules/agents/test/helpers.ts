/** Shared test setup: a fake provider and a kernel whose default model points at it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentTestKernel, type AgentTestKernel, type FakeProvider, type TestKernel } from '@talon/testing';

export const HELLO_WORLD = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hello-world.toml'), 'utf8');
/** Test-only modules (echo-tools, hooks-probe), loaded through module_paths. */
export const FIXTURE_MODULES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Env {
  fake: FakeProvider;
  k: AgentTestKernel;
}

export async function startEnv(
  options: {
    config?: string;
    home?: string;
    keepHome?: boolean;
    modules?: string[];
    echo?: boolean;
    /** A provider shared by several kernels (restarts, processes on one home); left running by stopEnv. */
    fake?: FakeProvider;
    /** The default model's wire format (OpenAI unless given). Anthropic keeps a message's content blocks apart on the wire. */
    provider?: 'openai' | 'anthropic';
    /** Node heartbeat and change-feed poll (tests of several processes on one home). */
    heartbeatMs?: number;
    feedPollMs?: number;
  } = {},
): Promise<Env> {
  const { fake, provider, home, keepHome, heartbeatMs, feedPollMs } = options;
  const k = await startAgentTestKernel({
    fake,
    provider,
    only: ['agents', 'error-envelope', ...(options.echo ? ['echo-tools'] : []), ...(options.modules ?? [])],
    config: `module_paths = [${JSON.stringify(FIXTURE_MODULES)}]\n${options.config ?? ''}`,
    home,
    keepHome,
    heartbeatMs,
    feedPollMs,
  });
  return { fake: k.fake, k };
}

export async function stopEnv(env: Env | undefined): Promise<void> {
  await env?.k.stop();
}

/** POST /api/agents/{id}/upload with one file part, as a client sends it. */
export function postUpload(k: TestKernel, agentId: string, name: string, type: string, data: Buffer | string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([typeof data === 'string' ? data : new Uint8Array(data)], { type }), name);
  return k.request(`/api/agents/${agentId}/upload`, { method: 'POST', body: form });
}

/** Uploads one file to an agent and returns its file id. */
export async function uploadFile(k: TestKernel, agentId: string, name: string, type: string, data: Buffer | string): Promise<string> {
  const res = await postUpload(k, agentId, name, type, data);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return (await json<{ file_id: string }>(res)).file_id;
}

/** A one-page PDF; with text it has a content stream drawing it, without it the page is blank (like a scan). */
export function pdf(text?: string): Buffer {
  const stream = text ? `BT /F1 12 Tf 72 720 Td (${text}) Tj ET` : '';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export function manifest(name: string, extra = ''): string {
  return `name = "${name}"\ndescription = "test agent ${name}"\ntags = ["test"]\n\n[model]\nprovider = "default"\nmodel = "default"\nsystem_prompt = "You are ${name}."\n\n[capabilities]\ntools = ["*"]\n${extra}`;
}

export async function spawn(k: TestKernel, name: string, extra = ''): Promise<{ agent_id: string; name: string }> {
  const res = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: manifest(name, extra) } });
  if (res.status !== 201) throw new Error(`spawn failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { agent_id: string; name: string };
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Reads an SSE response to its end: [{event, data}]. */
export async function readSse(res: Response): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const text = await res.text();
  return parseSse(text);
}

export function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  for (const block of text.split('\n\n')) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
  }
  return events;
}

// The kit's bounded wait, for the tests that import their helpers from here.
export { waitFor } from '@talon/testing';
