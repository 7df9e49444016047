/**
 * Usage and budgets: today's figures, tokens and cost by day and tokens by model (charts), tables by model, of media
 * spend and by agent, and the budgets: the global one and each agent's.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, Chart, ErrorText, fmtInt, fmtUsd, Pager, seg, Table, useAction, useApi, usePage } from '@talon/dashboard-kit';

interface Daily {
  days: { date: string; input_tokens: number; output_tokens: number; cost_usd: number; requests: number }[];
}
interface Summary {
  today: { input_tokens: number; output_tokens: number; cost_usd: number; requests: number };
}
interface ModelUse {
  model: string;
  provider: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  request_count: number;
}
interface MediaUse {
  kind: string;
  provider: string;
  model: string;
  unit: string | null;
  units: number;
  cost_usd: number;
  request_count: number;
  unpriced_count: number;
}
interface MediaSpend {
  total_cost_usd: number;
  request_count: number;
  unpriced_count: number;
  items: MediaUse[];
}
interface AgentSpend {
  agent_id: string;
  agent_name: string;
  total_cost_usd: number;
  today_cost_usd: number;
}
interface Budget {
  daily_limit_usd: number;
  monthly_limit_usd: number;
  today_spent_usd: number;
  month_spent_usd: number;
  status: string;
}

/** The chart shows the models that used the most tokens; the table lists them all. */
const CHART_MODELS = 12;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "2025-05-12" → "May 12": a day of the service's figures (UTC days), read as a date, not a code. */
const dayLabel = (date: string) => `${MONTHS[Number(date.slice(5, 7)) - 1] ?? date.slice(5, 7)} ${Number(date.slice(8, 10))}`;

export default function UsageView() {
  const summary = useApi<Summary>('/api/usage/summary');
  const daily = useApi<Daily>('/api/usage/daily');
  const byModel = useApi<{ models: ModelUse[] }>('/api/usage/by-model');
  const t = summary.data?.today;
  const days = daily.data?.days ?? [];
  const models = byModel.data?.models ?? [];
  const top = [...models].sort((a, b) => b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens)).slice(0, CHART_MODELS);
  return (
    <section>
      <h1>Usage &amp; budgets</h1>
      <ErrorText error={summary.error ?? daily.error ?? byModel.error} />
      {t && (
        <dl class="stats">
          <div>
            <dt>Requests today</dt>
            <dd>{fmtInt(t.requests)}</dd>
          </div>
          <div>
            <dt>Tokens today (in / out)</dt>
            <dd>
              {fmtInt(t.input_tokens)} / {fmtInt(t.output_tokens)}
            </dd>
          </div>
          <div>
            <dt>Cost today</dt>
            <dd>{fmtUsd(t.cost_usd)}</dd>
          </div>
        </dl>
      )}
      <div class="charts">
        {days.length > 0 && (
          <>
            <Chart
              title="Tokens by day"
              xLabel="Day (UTC)"
              yLabel="Tokens"
              labels={days.map((d) => dayLabel(d.date))}
              series={[
                { label: 'Input tokens', values: days.map((d) => d.input_tokens), color: '#2563eb' },
                { label: 'Output tokens', values: days.map((d) => d.output_tokens), color: '#d97706' },
              ]}
            />
            <Chart
              title="Cost by day (USD)"
              xLabel="Day (UTC)"
              yLabel="Cost (USD)"
              labels={days.map((d) => dayLabel(d.date))}
              series={[{ label: 'Cost', values: days.map((d) => d.cost_usd), color: '#16a34a' }]}
              format={fmtUsd}
              tick={fmtUsd}
            />
          </>
        )}
        {top.length > 0 && (
          <Chart
            title={models.length > CHART_MODELS ? `Tokens by model (the ${CHART_MODELS} largest)` : 'Tokens by model'}
            xLabel="Model"
            yLabel="Tokens"
            bars
            labels={top.map((m) => m.model)}
            series={[
              { label: 'Input tokens', values: top.map((m) => m.input_tokens), color: '#2563eb' },
              { label: 'Output tokens', values: top.map((m) => m.output_tokens), color: '#d97706' },
            ]}
          />
        )}
      </div>
      <ModelTable models={models} />
      <MediaTable />
      <AgentTable />
      <BudgetForm path="/api/budget" title="Global budget" />
    </section>
  );
}

function ModelTable({ models }: { models: ModelUse[] }) {
  const page = usePage(models, 50);
  return (
    <>
      <h2>By model</h2>
      <Table columns={['Model', 'Requests', 'Tokens in / out', 'Cost']}>
        {page.items.map((m) => (
          <tr>
            <th scope="row">
              {m.provider}/{m.model}
            </th>
            <td>{fmtInt(m.request_count)}</td>
            <td>
              {fmtInt(m.input_tokens)} / {fmtInt(m.output_tokens)}
            </td>
            <td>{fmtUsd(m.cost_usd)}</td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="models" />
    </>
  );
}

/** Seconds of audio or video may be fractional; images, characters and songs are whole. */
const fmtUnits = (n: number, unit: string | null) => `${unit === 'seconds' ? (Math.round(n * 10) / 10).toLocaleString() : fmtInt(n)} ${unit ?? ''}`.trim();

function MediaTable() {
  const media = useApi<MediaSpend>('/api/usage/media?period=month');
  const page = usePage(media.data?.items ?? [], 50);
  const m = media.data;
  return (
    <>
      <h2>Media this month</h2>
      <ErrorText error={media.error} />
      {m && (
        <p>
          {fmtUsd(m.total_cost_usd)} for {fmtInt(m.request_count)} media calls (images, speech, music, video, transcription).
          {m.unpriced_count > 0 && ` ${fmtInt(m.unpriced_count)} had no price in the catalogue and count as $0.`}
        </p>
      )}
      <Table columns={['Kind', 'Provider / model', 'Calls', 'Units', 'Cost']}>
        {page.items.map((r) => (
          <tr>
            <td>{r.kind}</td>
            <th scope="row">
              {r.provider}/{r.model || '—'}
            </th>
            <td>{fmtInt(r.request_count)}</td>
            <td>{fmtUnits(r.units, r.unit)}</td>
            <td>
              {fmtUsd(r.cost_usd)}
              {r.unpriced_count > 0 && ' (unpriced)'}
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="media rows" />
    </>
  );
}

function AgentTable() {
  const ranking = useApi<AgentSpend[]>('/api/budget/agents');
  const page = usePage(ranking.data ?? [], 50);
  const [editing, setEditing] = useState<AgentSpend>();
  return (
    <>
      <h2>By agent</h2>
      <ErrorText error={ranking.error} />
      <Table columns={['Agent', 'Today', 'Total', { hidden: 'Budget' }]}>
        {page.items.map((r) => (
          <tr>
            <th scope="row">{r.agent_name}</th>
            <td>{fmtUsd(r.today_cost_usd)}</td>
            <td>{fmtUsd(r.total_cost_usd)}</td>
            <td>
              <button type="button" class="small" aria-label={`Budget of ${r.agent_name}`} onClick={() => setEditing(r)}>
                Budget…
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <Pager {...page} label="agents" />
      {editing && <BudgetForm key={editing.agent_id} path={`/api/budget/agents/${seg(editing.agent_id)}`} title={`Budget of ${editing.agent_name}`} />}
    </>
  );
}

function BudgetForm({ path, title }: { path: string; title: string }) {
  const budget = useApi<Budget>(path);
  const [daily, setDaily] = useState('');
  const [monthly, setMonthly] = useState('');
  const action = useAction();
  useEffect(() => {
    if (budget.data) {
      setDaily(String(budget.data.daily_limit_usd));
      setMonthly(String(budget.data.monthly_limit_usd));
    }
  }, [budget.data]);
  const b = budget.data;
  const id = (f: string) => `${path.replace(/\W+/g, '-')}-${f}`;
  return (
    <form
      class="card grid-form"
      onSubmit={action.submit(async () => {
        await api(path, { method: 'PUT', json: { daily_limit_usd: Number(daily), monthly_limit_usd: Number(monthly) } });
        await budget.reload();
        return 'Budget saved';
      })}
    >
      <h2>{title}</h2>
      {b && (
        <p>
          Spent {fmtUsd(b.today_spent_usd)} today and {fmtUsd(b.month_spent_usd)} this month — status <strong>{b.status}</strong>. A limit of 0 means none.
        </p>
      )}
      <label for={id('daily')}>Daily limit (USD)</label>
      <input id={id('daily')} type="number" min="0" step="0.01" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} />
      <label for={id('monthly')}>Monthly limit (USD)</label>
      <input id={id('monthly')} type="number" min="0" step="0.01" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} />
      <ErrorText error={budget.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Save budget
      </button>
    </form>
  );
}
