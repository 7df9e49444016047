/**
 * What a person does with one message of the chat: copy it; edit a message they sent and re-run from there (a new
 * branch of the session, the old one kept); regenerate the last reply (the same, from the last message they sent).
 */
import { useState } from 'preact/hooks';
import type { ChatMessage } from './chat-state.tsx';

export interface MessageActionsProps {
  msg: ChatMessage;
  /** A turn runs: editing and regenerating wait for it. */
  busy: boolean;
  /** Re-runs the conversation from this message with the new text (user messages with a stored index). */
  onEdit?: (text: string) => void;
  /** Asks again for this reply (the last reply only). */
  onRegenerate?: () => void;
}

export function MessageActions({ msg, busy, onEdit, onRegenerate }: MessageActionsProps) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(msg.text);
  const [copied, setCopied] = useState<'done' | 'failed'>();
  const who = msg.role === 'user' ? 'your message' : 'the reply';

  async function copy() {
    try {
      await navigator.clipboard.writeText(msg.text);
      setCopied('done');
    } catch {
      setCopied('failed');
    }
    setTimeout(() => setCopied(undefined), 2000);
  }

  if (editing && onEdit)
    return (
      <form
        class="message-edit"
        onSubmit={(e) => {
          e.preventDefault();
          if (!draft.trim() || busy) return;
          setEditing(false);
          onEdit(draft);
        }}
      >
        <label class="sr-only" for="edit-message">
          Edit your message
        </label>
        <textarea id="edit-message" rows={3} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" class="primary" disabled={busy || !draft.trim()}>
            Save and re-run
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
          <span class="muted">The conversation continues in a new branch; the current one is kept in Sessions.</span>
        </div>
      </form>
    );

  if (msg.streaming || !msg.text) return null;
  return (
    <div class="message-actions">
      <button type="button" class="small" aria-label={`Copy ${who}`} onClick={() => void copy()}>
        {copied === 'done' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}
      </button>
      {onEdit && (
        <button
          type="button"
          class="small"
          disabled={busy}
          onClick={() => {
            setDraft(msg.text);
            setEditing(true);
          }}
        >
          Edit
        </button>
      )}
      {onRegenerate && (
        <button type="button" class="small" disabled={busy} onClick={onRegenerate}>
          Regenerate
        </button>
      )}
    </div>
  );
}
