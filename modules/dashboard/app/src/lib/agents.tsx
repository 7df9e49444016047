/**
 * Reading agents without reading the list (there may be thousands): the one a view opens on, and the names of the
 * agents a page of rows refers to. Choosing among all of them is the agent chooser's (components/agent-picker.tsx).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from './api.tsx';
import { useApi } from './use-api.tsx';

/**
 * What the chat reads first without an agent in the URL: the first agent only. The chat declares the same path in its
 * first_reads (modules/agents/module.toml), so the read started beside the sign-in probe is the one taken here.
 */
const FIRST_AGENT = '/api/agents?limit=1&offset=0';

interface AgentSummary {
  id: string;
  name: string;
  state: string;
  model_name: string;
}
interface AgentDetail {
  id: string;
  name: string;
  state: string;
  model: { provider: string; model: string };
}

/** The agent `id` names, read by id; without an id, the first agent (one summary). `none`: there is no agent at all. */
export function useAgentOrFirst(id: string | undefined) {
  const read = useApi<AgentDetail | AgentSummary[]>(id ? `/api/agents/${seg(id)}` : FIRST_AGENT);
  const agent: AgentSummary | undefined = read.data && (Array.isArray(read.data) ? read.data[0] : { ...read.data, model_name: read.data.model.model });
  return { ...read, agent, none: Array.isArray(read.data) && !read.data.length };
}

/**
 * The names of the agents `ids` refer to (the rows of a page), each read once by id (GET /api/agents/{id}) while the
 * view is open; an agent not found (since killed) keeps its id.
 */
export function useAgentNames(ids: (string | null)[]): (id: string) => string {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  const wanted = [...new Set(ids)].filter((id): id is string => !!id && !asked.current.has(id));
  useEffect(() => {
    for (const id of wanted) {
      asked.current.add(id);
      api<{ name: string }>(`/api/agents/${seg(id)}`).then(
        (a) => setNames((known) => new Map(known).set(id, a.name)),
        () => undefined,
      );
    }
  }, [wanted.join(' ')]);
  return (id) => names.get(id) ?? id;
}
