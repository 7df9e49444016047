/**
 * Small display helpers shared by the views. They use no Intl formatter: the first one a page creates loads the
 * browser's locale data, which costs a cold chat visit a large share of its time on a busy machine (a profile of
 * bench/dashboard.ts showed it). Times are local, as YYYY-MM-DD HH:MM:SS.
 */
const two = (n: number) => String(n).padStart(2, '0');
const grouped = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

export const fmtInt = (n: number | null | undefined) => (n == null ? '—' : (n < 0 ? '-' : '') + grouped(String(Math.abs(Math.round(n)))));
export const fmtUsd = (n: number | null | undefined) => (n == null ? '—' : `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`);
export const fmtClock = (d: Date) => `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
export function fmtTime(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${fmtClock(d)}`;
}
export const fmtJson = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
/**
 * A count with its noun in the right number: plural(1, 'agent') is "1 agent", plural(2, 'agent') "2 agents",
 * plural(3, 'entry', 'entries') "3 entries". English has two forms (one, other), so this needs no Intl.PluralRules
 * (and none of its locale data, above).
 */
export const plural = (n: number, one: string, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;
