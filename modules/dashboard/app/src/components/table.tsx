/**
 * A table with its column headings; a heading given as `{ hidden }` is there for screen readers only (an actions column).
 * Each body cell gets its column's heading as `data-label`: on a narrow screen the rows become stacked cards, each cell
 * labelled by it (styles.css). Set after each render, so the views' rows need not repeat their headings.
 */
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export type Column = string | { hidden: string };

export function Table({ columns, children }: { columns: Column[]; children: ComponentChildren }) {
  const body = useRef<HTMLTableSectionElement>(null);
  useLayoutEffect(() => {
    const labels = columns.map((c) => (typeof c === 'string' ? c : ''));
    for (const row of body.current?.rows ?? []) for (const cell of row.cells) if (cell.cellIndex < labels.length) cell.dataset.label = labels[cell.cellIndex];
  });
  return (
    <table class="table">
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{typeof c === 'string' ? c : <span class="sr-only">{c.hidden}</span>}</th>
          ))}
        </tr>
      </thead>
      <tbody ref={body}>{children}</tbody>
    </table>
  );
}
