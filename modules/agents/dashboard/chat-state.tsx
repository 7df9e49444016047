/** The chat's model: what a message shows, built from a stored session or from a live stream's events. */
export interface Step {
  id?: string;
  tool: string;
  input?: unknown;
  result?: string;
  isError?: boolean;
  done: boolean;
}

export interface ChatMessage {
  role: 'user' | 'assistant';
  text: string;
  steps: Step[];
  attachments?: string[];
  error?: string;
  streaming?: boolean;
  /** A message a person sent: its index in the stored session (a branch starts there when it is edited). */
  index?: number;
  /** A reply a stop cut short (kept with its partial text). */
  stopped?: boolean;
}

export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  iterations?: number;
  cost_usd?: number;
}

interface StoredMessage {
  role: string;
  content: string;
  tool_calls?: { id: string; name: string; input: unknown }[];
  tool_results?: { tool_use_id: string; content: string; is_error: boolean }[];
  stopped?: boolean;
}

export interface StoredSession {
  session_id: string;
  messages: StoredMessage[];
}

/**
 * One display message per turn side: the assistant's text and tool calls of one turn go together, and the tool
 * results (stored as user messages) are folded into the steps that asked for them.
 */
export function fromSession(session: StoredSession): ChatMessage[] {
  const out: ChatMessage[] = [];
  const steps = new Map<string, Step>();
  for (const [index, m] of session.messages.entries()) {
    if (m.tool_results?.length) {
      for (const r of m.tool_results) {
        const step = steps.get(r.tool_use_id);
        if (step) Object.assign(step, { result: r.content, isError: r.is_error, done: true });
      }
      if (!m.content) continue;
    }
    const role = m.role.toLowerCase() === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    const target: ChatMessage = role === 'assistant' && last?.role === 'assistant' ? last : { role, text: '', steps: [], ...(role === 'user' && { index }) };
    if (target !== last) out.push(target);
    if (m.stopped) target.stopped = true;
    if (m.content) target.text = target.text ? `${target.text}\n\n${m.content}` : m.content;
    for (const call of m.tool_calls ?? []) {
      const step: Step = { id: call.id, tool: call.name, input: call.input, done: false };
      steps.set(call.id, step);
      target.steps.push(step);
    }
  }
  return out;
}

/** Applies one event of POST /api/agents/{id}/message/stream to the assistant message being streamed. */
export function applyEvent(msg: ChatMessage, event: string, data: Record<string, unknown>): ChatMessage {
  switch (event) {
    case 'chunk':
      return { ...msg, text: msg.text + String(data.content ?? '') };
    case 'tool_use':
      return { ...msg, steps: [...msg.steps, { tool: String(data.tool), done: false }] };
    case 'tool_result': {
      const steps = [...msg.steps];
      const i = steps.findIndex((s) => !s.done && s.tool === data.tool);
      const done = { tool: String(data.tool), input: data.input, done: true };
      if (i >= 0) steps[i] = { ...steps[i], ...done };
      else steps.push(done);
      return { ...msg, steps };
    }
    case 'error':
      return { ...msg, error: String(data.error ?? 'the turn failed'), streaming: false };
    default:
      return msg;
  }
}
