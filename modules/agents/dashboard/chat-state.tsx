/** The chat's model: what a message shows, built from a stored session or from a live stream's events. */
export interface Step {
  id?: string;
  tool: string;
  input?: unknown;
  result?: string;
  isError?: boolean;
  done: boolean;
  /** The call was held for a human decision (approvals): the request, and where the decision stands. */
  approval?: HeldApproval;
}

export interface HeldApproval {
  /** Unknown for a decided call read back from the session (its outcome names it in the result). */
  id?: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired' | 'skipped' | 'not run';
  expiresAt?: string;
}

/** A held call's outcome is stored as the call made again under this prefix + its id (@talon/agents HELD_RESULT_PREFIX). */
const HELD_PREFIX = 'held-';

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
        if (step && r.tool_use_id.startsWith(HELD_PREFIX)) step.approval = { status: r.is_error ? 'not run' : 'approved' };
      }
      if (!m.content) continue;
    }
    // The outcome of a held call updates that call's step: it is not a new call, nor a new message.
    const calls = (m.tool_calls ?? []).filter((call) => {
      const held = call.id.startsWith(HELD_PREFIX) ? steps.get(call.id.slice(HELD_PREFIX.length)) : undefined;
      if (held) steps.set(call.id, held);
      return !held;
    });
    if (!m.content && m.tool_calls?.length && !calls.length) continue;
    const role = m.role.toLowerCase() === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    const target: ChatMessage = role === 'assistant' && last?.role === 'assistant' ? last : { role, text: '', steps: [], ...(role === 'user' && { index }) };
    if (target !== last) out.push(target);
    if (m.stopped) target.stopped = true;
    if (m.content) target.text = target.text ? `${target.text}\n\n${m.content}` : m.content;
    for (const call of calls) {
      const step: Step = { id: call.id, tool: call.name, input: call.input, done: false };
      steps.set(call.id, step);
      target.steps.push(step);
    }
  }
  return out;
}

/**
 * The session read back does not say which calls were held, nor who decided a call that did not run (it reads 'not
 * run'): what the page saw of them (approval_pending, a decision such as 'rejected') is kept on the steps of the same
 * calls.
 */
export function keepHeld(seen: readonly ChatMessage[], stored: ChatMessage[]): ChatMessage[] {
  const held = new Map(seen.flatMap((m) => m.steps.flatMap((s) => (s.id && s.approval ? [[s.id, s.approval] as const] : []))));
  if (!held.size) return stored;
  const keep = (s: Step) => {
    const saw = s.id ? held.get(s.id) : undefined;
    return saw && (!s.approval || saw.status !== 'pending') ? { ...s, approval: { ...s.approval, ...saw } } : s;
  };
  return stored.map((m) => ({ ...m, steps: m.steps.map(keep) }));
}

/** A held call's outcome (the approval_result event of the turn it resumes): its step, wherever it is, shows it. */
export function settle(messages: ChatMessage[], data: Record<string, unknown>): ChatMessage[] {
  const approvalId = String(data.approval_id);
  const status = String(data.status) as HeldApproval['status'];
  const result = { result: String(data.content ?? ''), isError: Boolean(data.is_error), done: true };
  return messages.map((m) =>
    m.steps.some((s) => s.id === data.tool_use_id || s.approval?.id === approvalId)
      ? {
          ...m,
          steps: m.steps.map((s) =>
            s.id === data.tool_use_id || s.approval?.id === approvalId ? { ...s, ...result, approval: { ...s.approval, status } } : s,
          ),
        }
      : m,
  );
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
    case 'approval_pending': {
      const steps = [...msg.steps];
      const i = steps.findLastIndex((s) => !s.done && s.tool === data.tool);
      const approval: HeldApproval = { id: String(data.approval_id), status: 'pending', expiresAt: String(data.expires_at) };
      if (i >= 0) steps[i] = { ...steps[i], id: String(data.tool_use_id), input: data.input, approval };
      return { ...msg, steps };
    }
    case 'error':
      return { ...msg, error: String(data.error ?? 'the turn failed'), streaming: false };
    default:
      return msg;
  }
}
