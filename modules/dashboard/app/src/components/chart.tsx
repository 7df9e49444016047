/**
 * A line or bar chart with uPlot, loaded on demand (only the usage view needs it, so the first load stays small).
 * The numbers are also given as a table for screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

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

interface ChartProps {
  title: string;
  /** What the x axis is (the first column of the table for screen readers). */
  xLabel: string;
  labels: string[];
  series: Series[];
  /** Bars (one group per label) instead of lines. */
  bars?: boolean;
  height?: number;
}

export function Chart({ title, xLabel, labels, series, bars = false, height = 220 }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let plot: uPlot | undefined;
    let gone = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (gone || !box.current) return;
      const xs = labels.map((_, i) => i);
      plot = new UPlot(
        {
          width: box.current.clientWidth || 600,
          height,
          legend: { show: true },
          // Bars need room at both ends: the x scale runs half a slot past the first and last label.
          // Bars stand on zero.
          scales: bars
            ? { x: { time: false, range: () => [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } }
            : { x: { time: false } },
          axes: [{ values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (labels[t] ?? '') : '')) }, {}],
          series: [
            { label: xLabel, value: (_u, i) => labels[i] ?? '' },
            ...series.map((s, i) =>
              bars
                ? { label: s.label, stroke: s.color, fill: s.color, width: 1, paths: barPaths(UPlot, i, series.length), points: { show: false } }
                : { label: s.label, stroke: s.color, width: 2, points: { show: true } },
            ),
          ],
        },
        [xs, ...series.map((s) => s.values)],
        box.current,
      );
    });
    return () => {
      gone = true;
      plot?.destroy();
    };
  }, [bars, labels.join(','), series.map((s) => s.values.join(',')).join(';')]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" data-testid="chart" />
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
                <td>{s.values[i]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
