/** One message of the chat: text as sanitised Markdown, tool calls as collapsible steps with input and result. */
import { useContext } from 'preact/hooks';
import { fmtJson, Markdown } from '@talon/dashboard-kit';
import type { ChatMessage, Step } from './chat-state.tsx';
import { MessageActions, type MessageActionsProps } from './message-actions.tsx';
import { ApprovalControls, heldLabel, heldState, HeldCallsContext } from './approval-step.tsx';

/** A call held for approval is never shown as failed; it is open while it waits (its decision is in it). */
function ToolStep({ step }: { step: Step }) {
  const approval = heldState(step, useContext(HeldCallsContext));
  const failed = step.isError && !approval;
  const state = approval ? heldLabel[approval.status] : !step.done ? 'running…' : failed ? 'failed' : 'done';
  return (
    <details
      class={`step${failed ? ' step-error' : ''}${approval ? ` step-held held-${approval.status.replace(' ', '-')}` : ''}`}
      open={approval?.status === 'pending'}
    >
      <summary>
        Tool <code>{step.tool}</code> — {state}
      </summary>
      {approval && <ApprovalControls approval={approval} />}
      {step.input !== undefined && (
        <>
          <h4>Input</h4>
          <pre>{fmtJson(step.input)}</pre>
        </>
      )}
      {step.result !== undefined && (
        <>
          <h4>Result</h4>
          <pre>{step.result}</pre>
        </>
      )}
    </details>
  );
}

/** `actions`: copy, edit and regenerate (absent: the message shows without them). */
export function Message({ msg, actions }: { msg: ChatMessage; actions?: Omit<MessageActionsProps, 'msg'> }) {
  return (
    <li class={`message ${msg.role}`} aria-busy={msg.streaming ? 'true' : undefined}>
      <span class="who">{msg.role === 'user' ? 'You' : 'Agent'}</span>
      {msg.attachments?.length ? <p class="attached">Attached: {msg.attachments.join(', ')}</p> : null}
      {msg.steps.map((s) => (
        <ToolStep step={s} />
      ))}
      {msg.role === 'assistant' ? <Markdown text={msg.text} /> : <p class="user-text">{msg.text}</p>}
      {msg.streaming && !msg.text && !msg.steps.length && (
        <p class="waiting" role="status">
          <span class="waiting-dots" aria-hidden="true" />
          Waiting for the model…
        </p>
      )}
      {msg.stopped && (
        <p class="stopped-mark" data-testid="stopped">
          Stopped
        </p>
      )}
      {msg.error && (
        <p class="error" role="alert">
          {msg.error}
        </p>
      )}
      {actions && <MessageActions msg={msg} {...actions} />}
    </li>
  );
}
