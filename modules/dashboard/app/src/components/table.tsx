/** A table with its column headings; a heading given as `{ hidden }` is there for screen readers only (an actions column). */
import type { ComponentChildren } from 'preact';

export type Column = string | { hidden: string };

export function Table({ columns, children }: { columns: Column[]; children: ComponentChildren }) {
  return (
    <table class="table">
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{typeof c === 'string' ? c : <span class="sr-only">{c.hidden}</span>}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
