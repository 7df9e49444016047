/**
 * A line or bar chart with uPlot, loaded on demand (only the usage view needs it, so the first load stays small).
 * Both axes are titled and their values formatted (the unit on the y axis), drawn in the theme's text colour — the
 * canvas does not follow CSS, so the chart is drawn again when the theme changes. The legend under it gives each
 * series' total, or its value at the point under the pointer. The numbers are also given as a table for screen readers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { fmtInt } from '../lib/format.tsx';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

/** Two series stand side by side (one left of its label, one right); one is centred; more overlap. */
function barPaths(UPlot: typeof uPlot, i: number, n: number) {
  const align = n === 2 ? (i === 0 ? -1 : 1) : 0;
  return UPlot.paths.bars!({ size: [n === 2 ? 0.4 : 0.6, 60], align, gap: 1 });
}

/** 1234 → "1.2k", 2500000 → "2.5M": tick values short enough for the axis. */
const compact = (n: number) => (Math.abs(n) >= 1e6 ? `${+(n / 1e6).toFixed(1)}M` : Math.abs(n) >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : String(+n.toFixed(4)));

/** The theme's colours as the page has them now (custom properties of styles.css). */
function themeColours() {
  const css = getComputedStyle(document.documentElement);
  return { text: css.getPropertyValue('--text').trim() || '#1b1f24', grid: css.getPropertyValue('--border').trim() || '#c9ced6' };
}

/** Counts changes of the page's theme (data-theme on <html>), so a chart can draw itself again. */
function useThemeChanges(): number {
  const [changes, setChanges] = useState(0);
  useEffect(() => {
    const seen = new MutationObserver(() => setChanges((n) => n + 1));
    seen.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => seen.disconnect();
  }, []);
  return changes;
}

interface ChartProps {
  title: string;
  /** What the x axis is (its title, and the first column of the table for screen readers). */
  xLabel: string;
  /** What the y axis counts, with its unit ("Tokens", "Cost (USD)"). */
  yLabel: string;
  labels: string[];
  series: Series[];
  /** A value in the legend and the table (default: a whole number with thousands separators). */
  format?: (n: number) => string;
  /** A value on the y axis (default: compact, 1.2k). */
  tick?: (n: number) => string;
  /** Bars (one group per label) instead of lines. */
  bars?: boolean;
  height?: number;
}

export function Chart({ title, xLabel, yLabel, labels, series, format = fmtInt, tick = compact, bars = false, height = 220 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<number | null>(null);
  const theme = useThemeChanges();
  useEffect(() => {
    let plot: uPlot | undefined;
    let gone = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (gone || !box.current) return;
      const xs = labels.map((_, i) => i);
      const { text, grid } = themeColours();
      const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      plot = new UPlot(
        {
          width: box.current.clientWidth || 600,
          height,
          legend: { show: false },
          // Bars need room at both ends: the x scale runs half a slot past the first and last label.
          // Bars stand on zero.
          scales: bars
            ? { x: { time: false, range: () => [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } }
            : { x: { time: false } },
          axes: [
            { ...axis, label: xLabel, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (labels[t] ?? '') : '')) },
            { ...axis, label: yLabel, values: (_u, ticks) => ticks.map(tick), size: 60 },
          ],
          series: [
            { label: xLabel },
            ...series.map((s, i) =>
              bars
                ? { label: s.label, stroke: s.color, fill: s.color, width: 1, paths: barPaths(UPlot, i, series.length), points: { show: false } }
                : { label: s.label, stroke: s.color, width: 2, points: { show: true } },
            ),
          ],
          hooks: { setCursor: [(u) => setHover(u.cursor.idx ?? null)] },
        },
        [xs, ...series.map((s) => s.values)],
        box.current,
      );
    });
    return () => {
      gone = true;
      plot?.destroy();
    };
  }, [bars, theme, labels.join(','), series.map((s) => s.values.join(',')).join(';')]);
  const at = hover !== null && hover < labels.length ? hover : null;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" data-testid="chart" aria-hidden="true" />
      <ul class="chart-legend" aria-label={`${title}: legend`}>
        {series.map((s) => (
          <li>
            <span class="swatch" aria-hidden="true" style={{ background: s.color }} />
            {s.label}: <strong>{format(at === null ? s.values.reduce((a, b) => a + b, 0) : (s.values[at] ?? 0))}</strong>{' '}
            <span class="muted">{at === null ? 'in all' : `at ${labels[at]}`}</span>
          </li>
        ))}
      </ul>
      <table class="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">{xLabel}</th>
            {series.map((s) => (
              <th scope="col">{s.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((l, i) => (
            <tr>
              <th scope="row">{l}</th>
              {series.map((s) => (
                <td>{format(s.values[i] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
