/**
 * A button for what cannot be undone (delete, remove, uninstall), asked twice in place: the first click shows, where
 * the button was, "Keep it" and a second button saying what happens. No browser dialog: `confirm()` stops the page,
 * cannot be styled or read by the view's tests, and a browser may suppress it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

interface Props {
  /** The first button's text ("Delete"). */
  children: ComponentChildren;
  /** What it does to what ("Delete morning report"): the first button's accessible name, and the question's. */
  label: string;
  /** The second button's text, saying what happens ("Delete morning report now"). */
  confirm: string;
  onConfirm: () => void;
  disabled?: boolean;
  /** The small buttons of a table row. */
  small?: boolean;
}

export function ConfirmButton({ children, label, confirm, onConfirm, disabled, small }: Props) {
  const [asking, setAsking] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  // Focus follows the question (a keyboard user is never left on a button that has gone) and goes back after it.
  useEffect(() => {
    if (asking) keep.current?.focus();
    else if (asked.current) first.current?.focus();
    asked.current = asking;
  }, [asking]);
  const size = small ? 'small ' : '';
  if (!asking)
    return (
      <button ref={first} type="button" class={`${size}danger`} aria-label={label} disabled={disabled} onClick={() => setAsking(true)}>
        {children}
      </button>
    );
  // "Keep it" comes first, under the pointer: a double click on the first button keeps the item.
  return (
    <span role="group" aria-label={`${label}?`} class="confirm" onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
      <button ref={keep} type="button" class={size.trim()} onClick={() => setAsking(false)}>
        Keep it
      </button>
      <button
        type="button"
        class={`${size}danger`}
        disabled={disabled}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirm}
      </button>
    </span>
  );
}
