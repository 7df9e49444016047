/** Skills and MCP servers: what agents can be given, with their state. */
import { useApi } from '../lib/use-api.tsx';
import { useHasModule } from '../lib/modules.tsx';
import { ErrorText } from '../components/error.tsx';
import { Pager, usePage } from '../components/pager.tsx';

interface Skill {
  name: string;
  version: string;
  description: string;
  runtime: string;
  category?: string;
  enabled: boolean;
  tools_count: number;
  source?: { type: string };
}
interface Server {
  name: string;
  transport?: unknown;
  connected?: boolean;
  state?: string;
  tools?: { name: string }[];
  last_error?: string | null;
}

export default function SkillsView() {
  const skills = useApi<{ skills: Skill[]; total: number }>(useHasModule('skills') ? '/api/skills' : null);
  const servers = useApi<{ servers: Server[]; total: number }>(useHasModule('mcp') ? '/api/mcp/servers' : null);
  const page = usePage(skills.data?.skills ?? [], 50);
  return (
    <section>
      <h1>Skills &amp; MCP servers</h1>
      {skills.data && (
        <>
          <h2>Skills</h2>
          <ErrorText error={skills.error} />
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Skill</th>
                <th scope="col">Kind</th>
                <th scope="col">Tools</th>
                <th scope="col">Source</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((s) => (
                <tr>
                  <th scope="row">
                    {s.name} <span class="muted">{s.version}</span>
                    <div class="muted">{s.description}</div>
                  </th>
                  <td>{s.runtime}</td>
                  <td>{s.tools_count}</td>
                  <td>{s.source?.type ?? '—'}</td>
                  <td>
                    <span class={`badge ${s.enabled ? 'ok' : 'off'}`}>{s.enabled ? 'enabled' : 'disabled'}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager {...page} label="skills" />
        </>
      )}
      {servers.data && (
        <>
          <h2>MCP servers</h2>
          <ErrorText error={servers.error} />
          {!servers.data.servers.length && <p>No MCP server is configured.</p>}
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">State</th>
                <th scope="col">Tools</th>
              </tr>
            </thead>
            <tbody>
              {servers.data.servers.map((s) => (
                <tr>
                  <th scope="row">{s.name}</th>
                  <td>
                    {s.state ?? (s.connected ? 'connected' : 'not connected')}
                    {s.last_error && <div class="error">{s.last_error}</div>}
                  </td>
                  <td>{s.tools?.map((t) => t.name).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
