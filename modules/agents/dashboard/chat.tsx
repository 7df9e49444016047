/**
 * Chat with an agent. The reply streams over POST /api/agents/{id}/message/stream (SSE read from fetch, so the key
 * stays in a header). After each turn the session is read back, which adds the tool results the stream does not
 * carry and the turn's cost from its trace. Owner notices are shown apart from the conversation.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  AgentPicker,
  api,
  ErrorText,
  fmtInt,
  fmtUsd,
  loadMarkdown,
  navigate,
  plural,
  readSse,
  refreshBadges,
  request,
  seg,
  useAgentOrFirst,
  type ViewProps,
} from '@talon/dashboard-kit';
import { HeldCallsContext, useHeldCalls, type Decision } from './approval-step.tsx';
import { applyEvent, fromSession, keepHeld, settle, type ChatMessage, type StoredSession, type TurnUsage } from './chat-state.tsx';
import { Message } from './chat-message.tsx';
import { Composer, type Upload } from './composer.tsx';
import { Sessions } from './sessions.tsx';
import { ModelSwitch } from './model-switch.tsx';
import { NoAgent } from './no-agent.tsx';

const MARK = 'talon:chat-interactive';
/** A long conversation shows its latest messages, and earlier ones this many at a time on request. */
const WINDOW = 100;

/**
 * The agent in the URL, read by id; without one, the first agent (one summary, not the list: there may be thousands).
 * The agent chooser reads the rest a page at a time.
 */
export default function ChatView({ params }: ViewProps) {
  const read = useAgentOrFirst(params[0]);
  const { agent } = read;
  const agentId = params[0] ?? agent?.id;
  // With the agent in the URL the conversation loads beside the agent's details, not after them.
  if (!read.data && !read.error && !params[0]) return <p class="loading">Loading…</p>;
  if (read.none) return <NoAgent />;
  return (
    <section class="chat">
      <h1 class="sr-only">Chat</h1>
      <div class="chat-head">
        <AgentPicker id="agent-pick" label="Agent" chosen={agent} onChoose={(a) => navigate('chat', a.id)} />
        {agent && <ModelSwitch key={agent.id} agentId={agent.id} current={agent.model_name} onChanged={() => void read.reload()} />}
      </div>
      <ErrorText error={read.error} />
      {agentId && !read.error && <Conversation key={agentId} agentId={agentId} />}
    </section>
  );
}

function Conversation({ agentId }: { agentId: string }) {
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [shown, setShown] = useState(WINDOW);
  const [sessionId, setSessionId] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [notices, setNotices] = useState<string[]>([]);
  const [usage, setUsage] = useState<TurnUsage>();
  const [error, setError] = useState<unknown>();
  const [turns, setTurns] = useState(0);
  const [loaded, setLoaded] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  /** The reply being streamed, if any: a decision waits for it (see decide). */
  const streaming = useRef<Promise<void> | undefined>(undefined);
  /** The session on screen; a turn streamed into it stops showing once another session replaces it. */
  const viewed = useRef<string | undefined>(undefined);

  /**
   * Reads the session back; `turn` is what the page saw of the last turn and the stored session may lack — added only
   * when the current session is still the one the turn ran in (a new session started meanwhile stays empty).
   */
  async function load(turn?: { session?: string; attachments: string[]; reply: ChatMessage }) {
    try {
      const session = await api<StoredSession>(`/api/agents/${seg(agentId)}/session`);
      viewed.current = session.session_id;
      setSessionId(session.session_id);
      const ranHere = turn && (turn.session === undefined || turn.session === session.session_id);
      const stored = ranHere ? withTurn(fromSession(session), turn) : fromSession(session);
      setMessages((seen) => keepHeld(seen, stored));
      setLoaded(true);
      setError(undefined);
    } catch (err) {
      setError(err);
    }
  }
  useLayoutEffect(() => void load(), [agentId]);
  useEffect(() => list.current?.lastElementChild?.scrollIntoView({ block: 'end' }), [messages]);
  // The first time the conversation is on screen and takes input: the mark is set once the frame that shows it has
  // been painted (a task after the next animation frame); bench/dashboard.ts reads it. Then the Markdown renderer
  // loads (the messages are plain text until it is there).
  useLayoutEffect(() => {
    if (!loaded) return;
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (!performance.getEntriesByName(MARK).length) performance.mark(MARK);
        void loadMarkdown().catch(() => undefined);
      }),
    );
  }, [loaded]);

  function send(text: string, attachments: Upload[], session = sessionId) {
    const user: ChatMessage = { role: 'user', text, steps: [], attachments: attachments.map((a) => a.filename) };
    const open = () =>
      request(`/api/agents/${seg(agentId)}/message/stream`, {
        json: { message: text, session_id: session, attachments: attachments.map((a) => ({ file_id: a.file_id })) },
      });
    return streamReply(open, user);
  }

  /**
   * A held call decided in its step: the session's next turn (the one the decision resumes) is followed from before
   * the decision is sent, so none of it is missed; its outcome updates the step, its reply streams below.
   */
  async function decide(approvalId: string, decision: Decision) {
    // The turn that held the call may still be running (its reply after the held call): following the session now
    // would follow that turn, not the one the decision resumes.
    await streaming.current;
    const follow = await request(`/api/agents/${seg(agentId)}/sessions/${seg(sessionId ?? '')}/stream`);
    try {
      const body = decision.approve ? (decision.totpCode ? { totp_code: decision.totpCode } : {}) : {};
      await api(`/api/approvals/${seg(approvalId)}/${decision.approve ? 'approve' : 'reject'}`, { json: body });
    } catch (err) {
      void follow.body?.cancel();
      throw err;
    }
    await streamReply(async () => follow);
  }

  /** Streams a turn's reply (after the user's message, when there is one), then reads the session back. */
  function streamReply(open: () => Promise<Response>, user?: ChatMessage): Promise<void> {
    const done = streamOne(open, user);
    streaming.current = done;
    return done;
  }

  async function streamOne(open: () => Promise<Response>, user?: ChatMessage) {
    setBusy(true);
    setError(undefined);
    setUsage(undefined);
    let reply: ChatMessage = { role: 'assistant', text: '', steps: [], streaming: true };
    const session = viewed.current;
    const onScreen = () => viewed.current === session;
    setMessages((m) => [...m, ...(user ? [user] : []), reply]);
    const update = (next: ChatMessage) => {
      reply = next;
      if (onScreen()) setMessages((m) => [...m.slice(0, -1), next]);
    };
    let finished: TurnUsage | undefined;
    try {
      const res = await open();
      await readSse(res, ({ event, data }) => {
        const parsed = JSON.parse(data) as Record<string, unknown>;
        if (event === 'owner_notice') setNotices((n) => [...n, String(parsed.text)]);
        else if (event === 'approval_result') {
          if (onScreen()) setMessages((m) => [...settle(m.slice(0, -1), parsed), reply]);
        } else if (event === 'done') finished = { ...(parsed.usage as TurnUsage), iterations: Number(parsed.iterations) };
        else update(applyEvent(reply, event, parsed));
      });
      update({ ...reply, streaming: false });
      if (finished) setUsage(await withCost(agentId, finished));
      await load({ session, attachments: user?.attachments ?? [], reply });
      setTurns((n) => n + 1);
      // The turn may have held a call (or a decision resumed it): the navigation's counts follow.
      refreshBadges();
    } catch (err) {
      update({ ...reply, streaming: false });
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  /**
   * Edit a sent message or regenerate the reply to it: the session branches before that message (the branch becomes
   * current, the old session stays in the list) and the text is sent again there.
   */
  async function rerun(index: number, text: string) {
    if (!sessionId) return;
    setBusy(true);
    try {
      const branch = await api<{ session_id: string }>(`/api/sessions/${seg(sessionId)}/branches`, { method: 'POST', json: { at: index } });
      await load();
      await send(text, [], branch.session_id);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  const lastReply = messages.findLastIndex((m) => m.role === 'assistant');
  const lastAsked = messages.findLastIndex((m) => m.role === 'user' && m.index !== undefined);
  const actionsOf = (m: ChatMessage, i: number) => ({
    busy,
    onEdit: m.role === 'user' && m.index !== undefined ? (text: string) => void rerun(m.index!, text) : undefined,
    onRegenerate: i === lastReply && lastAsked >= 0 && lastAsked < i ? () => void rerun(messages[lastAsked].index!, messages[lastAsked].text) : undefined,
  });

  const held = useHeldCalls(agentId, `${turns}:${sessionId}`, decide);
  const post = (path: string) => void api(path, { method: 'POST' }).catch(setError);
  return (
    // data-loaded: the conversation is on screen and the box takes a message (bench/dashboard.ts waits for it).
    <div class="chat-body" data-loaded={loaded ? 'true' : undefined}>
      <Sessions agentId={agentId} currentId={sessionId} turns={turns} onChanged={() => void load()} />
      <div class="conversation">
        {messages.length > shown && (
          <button type="button" class="small" onClick={() => setShown(shown + WINDOW)}>
            Show earlier messages ({messages.length - shown} more)
          </button>
        )}
        {/* Focusable: the list scrolls (on a phone it is the only scroller), and a keyboard must reach it. */}
        <ol class="messages" ref={list} aria-label="Conversation" aria-live="polite" tabIndex={0}>
          <HeldCallsContext.Provider value={held}>
            {messages.slice(-shown).map((m, i, shownList) => (
              <Message msg={m} actions={actionsOf(m, messages.length - shownList.length + i)} />
            ))}
          </HeldCallsContext.Provider>
        </ol>
        {usage && (
          <p class="turn-usage" data-testid="turn-usage">
            Last turn: {fmtInt(usage.input_tokens)} in / {fmtInt(usage.output_tokens)} out tokens, {plural(usage.iterations ?? 0, 'model call')}
            {usage.cost_usd !== undefined && <>, {fmtUsd(usage.cost_usd)}</>}
          </p>
        )}
        <ErrorText error={error} />
        <Composer
          agentId={agentId}
          busy={busy}
          onSend={(t, a) => void send(t, a)}
          onStop={() => post(`/api/agents/${seg(agentId)}/stop`)}
          onInterrupt={() => sessionId && post(`/api/agents/${seg(agentId)}/sessions/${seg(sessionId)}/interrupt`)}
        />
      </div>
      {notices.length > 0 && (
        <aside class="notices" aria-label="Owner notices">
          <h2>Owner notices</h2>
          <ul>
            {notices.map((n) => (
              <li>{n}</li>
            ))}
          </ul>
          <button type="button" onClick={() => setNotices([])}>
            Clear
          </button>
        </aside>
      )}
    </div>
  );
}

/**
 * The stored session keeps the text a person typed, not the names of the files sent with it, and a stopped turn may
 * have stored no answer: both are taken from what the page saw of the turn.
 */
function withTurn(stored: ChatMessage[], turn: { attachments: string[]; reply: ChatMessage }): ChatMessage[] {
  const lastUser = stored.findLastIndex((m) => m.role === 'user');
  if (lastUser >= 0 && turn.attachments.length) stored[lastUser] = { ...stored[lastUser], attachments: turn.attachments };
  if (stored[stored.length - 1]?.role !== 'assistant' && (turn.reply.text || turn.reply.error)) stored.push({ ...turn.reply, streaming: false });
  return stored;
}

/** The stream's done event has tokens but no cost: the turn's trace has it. */
async function withCost(agentId: string, usage: TurnUsage): Promise<TurnUsage> {
  try {
    const { traces } = await api<{ traces: { cost_usd: number }[] }>(`/api/agents/${seg(agentId)}/traces?limit=1`);
    return { ...usage, cost_usd: traces[0]?.cost_usd };
  } catch {
    return usage;
  }
}
