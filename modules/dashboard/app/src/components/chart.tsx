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

export function Chart({ title, labels, series, height = 220 }: { title: string; labels: string[]; series: Series[]; height?: number }) {
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
          scales: { x: { time: false } },
          axes: [{ values: (_u, ticks) => ticks.map((t) => labels[t] ?? '') }, {}],
          series: [
            { label: 'Day', value: (_u, i) => labels[i] ?? '' },
            ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: true } })),
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
  }, [labels.join(','), series.map((s) => s.values.join(',')).join(';')]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-canvas" data-testid="chart" />
      <table class="sr-only">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
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
