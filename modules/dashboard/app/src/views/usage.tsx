/** Usage and budgets: today, cost and tokens by day (chart), by model, per-agent ranking, and the global budget. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api.tsx';
import { useApi } from '../lib/use-api.tsx';
import { fmtInt, fmtUsd } from '../lib/format.tsx';
import { Chart } from '../components/chart.tsx';
import { ErrorText } from '../components/error.tsx';
import { useAction } from '../components/action.tsx';

interface Daily {
  days: { date: string; input_tokens: number; output_tokens: number; cost_usd: number; requests: number }[];
  total_cost_usd: number;
}
interface Summary {
  today: { input_tokens: number; output_tokens: number; cost_usd: number; requests: number };
}
interface ByModel {
  models: { model: string; provider: string; input_tokens: number; output_tokens: number; cost_usd: number; request_count: number }[];
}
interface Budget {
  daily_limit_usd: number;
  monthly_limit_usd: number;
  today_spent_usd: number;
  month_spent_usd: number;
  status: string;
}

export default function UsageView() {
  const summary = useApi<Summary>('/api/usage/summary');
  const daily = useApi<Daily>('/api/usage/daily');
  const byModel = useApi<ByModel>('/api/usage/by-model');
  const ranking = useApi<{ agent_id: string; agent_name: string; total_cost_usd: number; today_cost_usd: number }[]>('/api/budget/agents');
  const t = summary.data?.today;
  const days = daily.data?.days ?? [];
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
      {days.length > 0 && (
        <div class="charts">
          <Chart
            title="Tokens by day"
            labels={days.map((d) => d.date.slice(5))}
            series={[
              { label: 'Input tokens', values: days.map((d) => d.input_tokens), color: '#2563eb' },
              { label: 'Output tokens', values: days.map((d) => d.output_tokens), color: '#d97706' },
            ]}
          />
          <Chart
            title="Cost by day (USD)"
            labels={days.map((d) => d.date.slice(5))}
            series={[{ label: 'Cost', values: days.map((d) => d.cost_usd), color: '#16a34a' }]}
          />
        </div>
      )}
      <h2>By model</h2>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Requests</th>
            <th scope="col">Tokens in / out</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {byModel.data?.models.map((m) => (
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
        </tbody>
      </table>
      <h2>By agent</h2>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Agent</th>
            <th scope="col">Today</th>
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {ranking.data?.map((r) => (
            <tr>
              <th scope="row">{r.agent_name}</th>
              <td>{fmtUsd(r.today_cost_usd)}</td>
              <td>{fmtUsd(r.total_cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <BudgetForm />
    </section>
  );
}

function BudgetForm() {
  const budget = useApi<Budget>('/api/budget');
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
  return (
    <form
      class="card grid-form"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          await api('/api/budget', { method: 'PUT', json: { daily_limit_usd: Number(daily), monthly_limit_usd: Number(monthly) } });
          await budget.reload();
          return 'Budget saved';
        });
      }}
    >
      <h2>Global budget</h2>
      {b && (
        <p>
          Spent {fmtUsd(b.today_spent_usd)} today and {fmtUsd(b.month_spent_usd)} this month — status <strong>{b.status}</strong>. A limit of 0 means none.
        </p>
      )}
      <label for="budget-daily">Daily limit (USD)</label>
      <input id="budget-daily" type="number" min="0" step="0.01" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} />
      <label for="budget-monthly">Monthly limit (USD)</label>
      <input id="budget-monthly" type="number" min="0" step="0.01" value={monthly} onInput={(e) => setMonthly(e.currentTarget.value)} />
      <ErrorText error={budget.error ?? action.error} />
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy}>
        Save budget
      </button>
    </form>
  );
}
