/**
 * The home: the service at a glance (health, providers with where their keys come from, agents and their cost today,
 * pending approvals, recent failures), each section there only while the module it reads runs. With no provider ready
 * (no key stored or in the environment, no local runtime answering) or no agent yet, it is the guided setup instead
 * (setup.tsx); #/home/setup opens the setup at any time.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ErrorText, href, useApi, useHasModule, type RequestOptions, type ViewProps } from '@talon/dashboard-kit';
import { providerChoices, type ProviderChoice } from './first-run.ts';
import { Setup } from './setup.tsx';
import { AgentsSection, ApprovalsSection, FailuresSection, HealthSection, ProvidersSection } from './home-sections.tsx';

export default function HomeView({ params }: ViewProps) {
  const catalog = useHasModule('catalog');
  const agentsRun = useHasModule('agents');
  const approvals = useHasModule('approvals');
  const [choices, setChoices] = useState<ProviderChoice[]>();
  const [error, setError] = useState<unknown>();
  // One agent is enough to know there is one (there may be thousands).
  const firstAgent = useApi<unknown[]>(agentsRun ? '/api/agents?limit=1&offset=0' : null);
  useEffect(() => {
    if (catalog) providerChoices((path, init) => api(path, init as RequestOptions)).then(setChoices, setError);
  }, [catalog]);

  if ((catalog && !choices && !error) || (agentsRun && firstAgent.loading)) return <p class="loading">Loading…</p>;
  const noProvider = catalog && !!choices && !choices.some((c) => c.ready);
  const noAgent = agentsRun && firstAgent.data?.length === 0;
  if (params[0] === 'setup' || noProvider || noAgent)
    return (
      <section>
        <h1>Set up Talon</h1>
        <p>
          {noProvider ? 'No model provider is ready yet. ' : noAgent ? 'There is no agent yet. ' : ''}
          These steps choose a provider, test its key, choose the default model and create a first agent.
          {!noProvider && !noAgent && (
            <>
              {' '}
              <a href={href('home')}>Back to the home</a>
            </>
          )}
        </p>
        <ErrorText error={error} />
        {(choices || !catalog) && <Setup choices={choices ?? []} />}
      </section>
    );
  return (
    <section>
      <h1>Home</h1>
      <p>
        <a href={href('home', 'setup')}>Guided setup</a>
      </p>
      <ErrorText error={error ?? firstAgent.error} />
      <div class="cards grid">
        <HealthSection />
        {choices && <ProvidersSection choices={choices.filter((c) => c.ready)} />}
        {agentsRun && <AgentsSection />}
        {approvals && <ApprovalsSection />}
        {agentsRun && <FailuresSection />}
      </div>
    </section>
  );
}
