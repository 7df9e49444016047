/** A search box whose text is handed on, trimmed, when the form is submitted; `children` are further controls (a category). */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export function SearchForm({ id, label, onSearch, children }: { id: string; label: string; onSearch: (text: string) => void; children?: ComponentChildren }) {
  const [text, setText] = useState('');
  return (
    <form
      role="search"
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text.trim());
      }}
    >
      <label for={id}>{label}</label>
      <input id={id} type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit">Search</button>
      {children}
    </form>
  );
}
