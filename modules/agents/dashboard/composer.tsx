/**
 * The message box. Enter sends, Shift+Enter makes a new line, Esc stops the running turn. Files come by the
 * picker, drag-and-drop or paste; each is uploaded at once and sent with the next message.
 */
import { useRef, useState } from 'preact/hooks';
import { ErrorText, request, seg } from '@talon/dashboard-kit';

export interface Upload {
  file_id: string;
  filename: string;
}

interface Props {
  agentId: string;
  busy: boolean;
  onSend: (text: string, attachments: Upload[]) => void;
  onStop: () => void;
  onInterrupt: () => void;
}

export function Composer({ agentId, busy, onSend, onStop, onInterrupt }: Props) {
  const [text, setText] = useState('');
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [uploading, setUploading] = useState(0);
  const [error, setError] = useState<unknown>(undefined);
  const picker = useRef<HTMLInputElement>(null);

  async function upload(files: Iterable<File>) {
    for (const file of files) {
      setUploading((n) => n + 1);
      try {
        const form = new FormData();
        form.append('file', file, file.name || 'pasted');
        const res = await request(`/api/agents/${seg(agentId)}/upload`, { body: form });
        const up = (await res.json()) as Upload;
        setUploads((u) => [...u, { file_id: up.file_id, filename: up.filename }]);
        setError(undefined);
      } catch (err) {
        setError(err);
      } finally {
        setUploading((n) => n - 1);
      }
    }
  }

  function send() {
    if (busy || uploading || (!text.trim() && !uploads.length)) return;
    onSend(text, uploads);
    setText('');
    setUploads([]);
  }

  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        if (e.dataTransfer?.files.length) void upload(e.dataTransfer.files);
      }}
    >
      {uploads.length > 0 && (
        <ul class="chips" aria-label="Attachments to send">
          {uploads.map((u) => (
            <li>
              {u.filename}
              <button type="button" aria-label={`Remove ${u.filename}`} onClick={() => setUploads(uploads.filter((x) => x !== u))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={error} />
      <label for="message" class="sr-only">
        Message
      </label>
      <textarea
        id="message"
        rows={3}
        placeholder="Message the agent (Enter sends, Shift+Enter new line, Esc stops; drop or paste files to attach)"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          } else if (e.key === 'Escape' && busy) {
            e.preventDefault();
            onStop();
          }
        }}
        onPaste={(e) => {
          const files = e.clipboardData?.files;
          if (files?.length) {
            e.preventDefault();
            void upload(files);
          }
        }}
      />
      <div class="composer-actions">
        <input
          ref={picker}
          type="file"
          multiple
          class="sr-only"
          id="attach"
          aria-label="Attach files"
          onChange={(e) => void upload(e.currentTarget.files ?? [])}
          tabIndex={-1}
        />
        <button type="button" onClick={() => picker.current?.click()}>
          Attach file
        </button>
        {uploading > 0 && <span class="muted">Uploading…</span>}
        <span class="spacer" />
        {busy && (
          <>
            <button type="button" onClick={onInterrupt} title="Skip the remaining tool calls and end the turn">
              Interrupt
            </button>
            <button type="button" class="danger" onClick={onStop} title="Stop every turn of this agent (Esc)">
              Stop
            </button>
          </>
        )}
        <button type="submit" class="primary" disabled={busy || uploading > 0}>
          Send
        </button>
      </div>
    </form>
  );
}
