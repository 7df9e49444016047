/**
 * A scripted LLM provider for tests: a real HTTP server on 127.0.0.1 that
 * speaks the OpenAI chat-completions, Anthropic Messages, Gemini
 * generateContent (POST /v1beta/models/{model}:generateContent and
 * :streamGenerateContent?alt=sse) and Ollama native (POST /api/chat, NDJSON
 * when streaming; GET /api/tags) wire formats (streaming and not, tool calls,
 * usage), plus OpenAI embeddings. Tests queue replies; every request is
 * recorded so tests can assert what was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

export interface ScriptedReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { input: number; output: number };
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** Seconds for the Retry-After header (with status 429/503). */
  retryAfter?: number;
  /** Wait this long before answering (interrupt tests). */
  delayMs?: number;
  /** Stream: split text into chunks of this many characters (default 4). */
  chunkSize?: number;
  stopReason?: 'end_turn' | 'max_tokens';
  /** Stream: drop the connection after this many text chunks (a provider failing mid-stream). */
  cutAfterChunks?: number;
  /** Stream: pause this long after each text chunk (slow streams, for abort tests). */
  chunkDelayMs?: number;
}

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  aborted: boolean;
  /** Time the provider spent on the request, from its first byte in to its last byte out (ms). */
  ms?: number;
  /** performance.now() when the request's first byte arrived, and when its answer's last byte went out (benchmarks split a client's time around them). */
  startedAt?: number;
  finishedAt?: number;
}

export class FakeProvider {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptedReply[] = [];
  private fallback: ScriptedReply = { text: 'ok' };
  private server?: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  /** Deterministic embedding dimension for /embeddings. */
  embeddingDim = 384;

  /** Queue replies, consumed in order; when empty the fallback answers. */
  enqueue(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  setFallback(reply: ScriptedReply): this {
    this.fallback = reply;
    return this;
  }

  get pending(): number {
    return this.queue.length;
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    return this.url;
  }

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    } catch {
      body = {};
    }
    const record: RecordedRequest = { path: req.url ?? '', headers: req.headers, body, aborted: false, startedAt: started };
    this.requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
    });
    res.on('finish', () => {
      record.finishedAt = performance.now();
      record.ms = record.finishedAt - started;
    });
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path.endsWith('/models')) return json(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model' }] });
    if (req.method === 'GET' && path === '/api/tags') return json(res, 200, ollamaTags());
    if (path.endsWith('/embeddings')) return this.embeddings(body, res);
    const reply = this.queue.shift() ?? this.fallback;
    if (reply.delayMs) {
      await pause(reply.delayMs, res);
      if (record.aborted || res.destroyed) return;
    }
    if (reply.status && reply.status >= 400) {
      const headers: Record<string, string> = {};
      if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
      const message = `scripted error ${reply.status}`;
      if (path === '/api/chat') return json(res, reply.status, { error: message }, headers);
      if (GEMINI_PATH.test(path))
        return json(
          res,
          reply.status,
          { error: { code: reply.status, message, status: reply.status === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE' } },
          headers,
        );
      return json(res, reply.status, { error: { message, type: 'rate_limit_error' } }, headers);
    }
    const gemini = GEMINI_PATH.exec(path);
    if (gemini)
      return gemini[2] === 'streamGenerateContent'
        ? this.geminiStream(reply, res, gemini[1])
        : json(res, 200, geminiResponse(reply, gemini[1], reply.text ?? '', reply.toolCalls ?? [], true));
    if (path === '/api/chat')
      return body.stream === false
        ? json(res, 200, ollamaFinal(reply, String(body.model), reply.text ?? '', reply.toolCalls ?? []))
        : this.ollamaStream(reply, res, String(body.model));
    if (path.endsWith('/chat/completions')) return body.stream ? this.openaiStream(reply, res) : json(res, 200, openaiCompletion(reply, String(body.model)));
    if (path.endsWith('/messages'))
      return body.stream ? this.anthropicStream(reply, res, String(body.model)) : json(res, 200, anthropicMessage(reply, String(body.model)));
    json(res, 404, { error: { message: `fake provider has no ${path}` } });
  }

  private embeddings(body: Record<string, unknown>, res: http.ServerResponse): void {
    const inputs = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input ?? '')];
    json(res, 200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, this.embeddingDim) })),
      model: body.model,
      usage: { prompt_tokens: inputs.join(' ').split(/\s+/).length, total_tokens: inputs.join(' ').split(/\s+/).length },
    });
  }

  private async openaiStream(reply: ScriptedReply, res: http.ServerResponse): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const id = `chatcmpl-${Date.now()}`;
    const send = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'fake', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
      );
    send({ role: 'assistant', content: '' });
    if (!(await textChunks(reply, res, (part) => send({ content: part })))) return;
    (reply.toolCalls ?? []).forEach((call, index) => {
      const callId = call.id ?? `call_${index}_${Math.random().toString(36).slice(2, 8)}`;
      send({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] });
      const args = JSON.stringify(call.input);
      for (const part of split(args, 8)) send({ tool_calls: [{ index, function: { arguments: part } }] });
    });
    send({}, reply.toolCalls?.length ? 'tool_calls' : reply.stopReason === 'max_tokens' ? 'length' : 'stop');
    const usage = reply.usage ?? { input: 10, output: 5 };
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: 'fake', choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  }

  private async geminiStream(reply: ScriptedReply, res: http.ServerResponse, model: string): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    if (!(await textChunks(reply, res, (part) => send(geminiResponse(reply, model, part, [], false))))) return;
    // Gemini sends function calls whole, in the last chunk, together with finishReason and usage.
    send(geminiResponse(reply, model, '', reply.toolCalls ?? [], true));
    res.end();
  }

  private async ollamaStream(reply: ScriptedReply, res: http.ServerResponse, model: string): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const line = (value: unknown) => res.write(`${JSON.stringify(value)}\n`);
    if (
      !(await textChunks(reply, res, (part) =>
        line({ model, created_at: new Date().toISOString(), message: { role: 'assistant', content: part }, done: false }),
      ))
    )
      return;
    if (reply.toolCalls?.length) {
      line({
        model,
        created_at: new Date().toISOString(),
        message: { role: 'assistant', content: '', tool_calls: ollamaToolCalls(reply.toolCalls) },
        done: false,
      });
    }
    line(ollamaFinal(reply, model, '', []));
    res.end();
  }

  private async anthropicStream(reply: ScriptedReply, res: http.ServerResponse, model: string): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const usage = reply.usage ?? { input: 10, output: 5 };
    const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', {
      message: {
        id: `msg_${Date.now()}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage.input, output_tokens: 0 },
      },
    });
    let index = 0;
    if (reply.text) {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (!(await textChunks(reply, res, (part) => ev('content_block_delta', { index, delta: { type: 'text_delta', text: part } })))) return;
      ev('content_block_stop', { index });
      index++;
    }
    for (const call of reply.toolCalls ?? []) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: call.id ?? `toolu_${index}`, name: call.name, input: {} } });
      for (const part of split(JSON.stringify(call.input), 8)) ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
      ev('content_block_stop', { index });
      index++;
    }
    ev('message_delta', {
      delta: { stop_reason: reply.toolCalls?.length ? 'tool_use' : (reply.stopReason ?? 'end_turn') },
      usage: { output_tokens: usage.output },
    });
    ev('message_stop', {});
    res.end();
  }
}

function openaiCompletion(reply: ScriptedReply, model: string) {
  const usage = reply.usage ?? { input: 10, output: 5 };
  const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}`,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.input) },
  }));
  return {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls.length ? 'tool_calls' : reply.stopReason === 'max_tokens' ? 'length' : 'stop',
      },
    ],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
}

function anthropicMessage(reply: ScriptedReply, model: string) {
  const usage = reply.usage ?? { input: 10, output: 5 };
  const content: unknown[] = [];
  if (reply.text) content.push({ type: 'text', text: reply.text });
  (reply.toolCalls ?? []).forEach((c, i) => content.push({ type: 'tool_use', id: c.id ?? `toolu_${i}`, name: c.name, input: c.input }));
  return {
    id: `msg_${Date.now()}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: reply.toolCalls?.length ? 'tool_use' : (reply.stopReason ?? 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

/** /v1beta/models/{model}:{method}; the model may contain slashes only as %2F. */
const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function geminiResponse(reply: ScriptedReply, model: string, text: string, calls: ScriptedToolCall[], last: boolean) {
  const usage = reply.usage ?? { input: 10, output: 5 };
  const parts: unknown[] = [];
  if (text) parts.push({ text });
  for (const c of calls) parts.push({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.input } });
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        index: 0,
        ...(last ? { finishReason: reply.stopReason === 'max_tokens' ? 'MAX_TOKENS' : 'STOP' } : {}),
      },
    ],
    ...(last ? { usageMetadata: { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output } } : {}),
    modelVersion: decodeURIComponent(model),
  };
}

function ollamaToolCalls(calls: ScriptedToolCall[]) {
  return calls.map((c) => ({ function: { name: c.name, arguments: c.input } }));
}

function ollamaFinal(reply: ScriptedReply, model: string, text: string, calls: ScriptedToolCall[]) {
  const usage = reply.usage ?? { input: 10, output: 5 };
  return {
    model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: text, ...(calls.length ? { tool_calls: ollamaToolCalls(calls) } : {}) },
    done: true,
    done_reason: reply.stopReason === 'max_tokens' ? 'length' : 'stop',
    total_duration: 1000,
    load_duration: 0,
    prompt_eval_count: usage.input,
    prompt_eval_duration: 500,
    eval_count: usage.output,
    eval_duration: 500,
  };
}

function ollamaTags() {
  const details = { format: 'gguf', family: 'fake', families: ['fake'], parameter_size: '1B', quantization_level: 'Q4_0' };
  return { models: [{ name: 'fake-model:latest', model: 'fake-model:latest', modified_at: new Date(0).toISOString(), size: 1, digest: 'fake', details }] };
}

/** Deterministic bag-of-words embedding: texts sharing words are close. */
export function fakeEmbedding(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    v[Math.abs(h) % dim] += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** Writes the scripted text in chunks, with chunkDelayMs and cutAfterChunks; false when the stream must end here. */
async function textChunks(reply: ScriptedReply, res: http.ServerResponse, emit: (part: string) => void): Promise<boolean> {
  for (const [i, part] of split(reply.text ?? '', reply.chunkSize ?? 4).entries()) {
    if (i === reply.cutAfterChunks) {
      // Let the chunks already written reach the client, then drop the connection without finishing the reply.
      await new Promise((r) => setTimeout(r, 30));
      res.destroy();
      return false;
    }
    if (res.destroyed) return false;
    emit(part);
    if (reply.chunkDelayMs) await pause(reply.chunkDelayMs, res);
  }
  return !res.destroyed;
}

/** Waits ms, or less when the client goes away: a long scripted delay must not keep a finished test's process alive. */
function pause(ms: number, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const closed = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      res.off('close', closed);
      resolve();
    }, ms);
    res.once('close', closed);
  });
}

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
