/**
 * The agent builder, for a new agent and for editing one: fields for name, description, instructions, model, tools,
 * skills, MCP servers, memory scopes and budget, and the same manifest as TOML one click away (builder-doc.ts keeps
 * both views on one document, so keys the form does not show survive). As it is typed the manifest is checked by
 * POST /api/agents/validate and each problem shown on its field (a taken name, an unknown tool…); what the service
 * refuses at spawn or save is shown the same way.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, ErrorText, useAction, useApi, useHasModule } from '@talon/dashboard-kit';
import { csv, fieldOf, fromCsv, fromToml, names, text, toToml, write, writeNumber, type Doc, type Field } from './builder-doc.ts';
import { Checklist, type CheckItem } from './checklist.tsx';
import { ModelField } from './model-field.tsx';
import { ManifestEditor, tomlProblem } from './manifest-editor.tsx';

interface Problem {
  field: string;
  message: string;
}

/** How long typing rests before the manifest is checked. */
const CHECK_AFTER_MS = 300;

const ALL_TOOLS: CheckItem = { name: '*', description: 'every tool, including ones added later' };

export function AgentBuilder(props: {
  /** The manifest to start from (a template's, or the agent's own when editing). */
  initial: string;
  /** Set when editing that agent: saving replaces its manifest (PATCH). */
  agentId?: string;
  onDone: (result: { agent_id: string; name: string }) => void;
}) {
  const [doc, setDoc] = useState<Doc>(() => fromToml(props.initial));
  const [tomlText, setTomlText] = useState<string | undefined>(undefined);
  const [problems, setProblems] = useState<Problem[]>([]);
  // Bumped by a spawn or save: the same text is checked again (its name is now taken, say).
  const [generation, setGeneration] = useState(0);
  const action = useAction();
  useEffect(() => {
    setDoc(fromToml(props.initial));
    setTomlText(undefined);
  }, [props.initial]);

  const manifest = tomlText ?? toToml(doc);
  const syntax = tomlText === undefined ? undefined : tomlProblem(tomlText);
  // Checked as it is typed; an answer for an older text is dropped.
  useEffect(() => {
    if (syntax) return;
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      api<{ problems: Problem[] }>('/api/agents/validate', {
        json: { manifest_toml: manifest, ...(props.agentId && { agent_id: props.agentId }) },
        signal: ctl.signal,
      })
        .then((r) => setProblems(r.problems))
        .catch(() => undefined);
    }, CHECK_AFTER_MS);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [manifest, syntax, props.agentId, generation]);

  const problemOf = (field: Field) =>
    problems
      .filter((p) => fieldOf(p.field) === field)
      .map((p) => p.message)
      .join('; ') || undefined;
  const general = problems.filter((p) => fieldOf(p.field) === undefined);
  const set = (field: Field, value: unknown) => setDoc(write(doc, field, value));

  const submit = action.submit(async () => {
    try {
      const body = { manifest_toml: manifest };
      const res = props.agentId
        ? await api<{ id: string; name: string }>(`/api/agents/${encodeURIComponent(props.agentId)}`, { method: 'PATCH', json: body }).then((d) => ({
            agent_id: d.id,
            name: d.name,
          }))
        : await api<{ agent_id: string; name: string }>('/api/agents', { json: body });
      props.onDone(res);
      setGeneration((g) => g + 1);
      return props.agentId ? `Saved ${res.name}` : `Spawned ${res.name}`;
    } catch (err) {
      // The service's refusal on its fields (its `problems`); a taken name on the name.
      if (err instanceof ApiError && Array.isArray(err.body?.problems)) setProblems(err.body.problems as Problem[]);
      else if (err instanceof ApiError && err.status === 409) setProblems([{ field: 'name', message: err.message }]);
      throw err;
    }
  });

  const toggleView = () => {
    if (tomlText === undefined) return setTomlText(toToml(doc));
    setDoc(fromToml(tomlText));
    setTomlText(undefined);
  };

  return (
    <form class="card builder" onSubmit={submit} aria-label={props.agentId ? 'Edit the agent' : 'Build an agent'}>
      <div class="toolbar">
        <button type="button" aria-pressed={tomlText === undefined} disabled={tomlText === undefined} onClick={toggleView}>
          Fields
        </button>
        <button type="button" aria-pressed={tomlText !== undefined} disabled={tomlText !== undefined} onClick={toggleView}>
          TOML
        </button>
        {syntax && <span class="muted">Fix the TOML to go back to the fields.</span>}
      </div>
      {tomlText !== undefined ? (
        <>
          <ManifestEditor
            value={tomlText}
            onInput={(t) => {
              setTomlText(t);
              if (!tomlProblem(t)) setDoc(fromToml(t));
            }}
            refusal={action.error}
          />
          <ProblemList problems={problems} />
        </>
      ) : (
        <Fields doc={doc} set={set} setDoc={setDoc} problemOf={problemOf} />
      )}
      {tomlText === undefined && (
        <>
          <ProblemList problems={general} />
          <ErrorText error={action.error} />
        </>
      )}
      {action.done && <p role="status">{action.done}</p>}
      <button type="submit" class="primary" disabled={action.busy || Boolean(syntax)}>
        {props.agentId ? 'Save' : 'Spawn'}
      </button>
    </form>
  );
}

function ProblemList({ problems }: { problems: Problem[] }) {
  if (!problems.length) return null;
  return (
    <ul class="error" aria-label="Problems of the manifest">
      {problems.map((p) => (
        <li>
          <span class="code">{p.field}</span>: {p.message}
        </li>
      ))}
    </ul>
  );
}

function Fields({
  doc,
  set,
  setDoc,
  problemOf,
}: {
  doc: Doc;
  set: (f: Field, v: unknown) => void;
  setDoc: (d: Doc) => void;
  problemOf: (f: Field) => string | undefined;
}) {
  const tools = useApi<{ tools: CheckItem[] }>(useHasModule('tools') ? '/api/tools' : null);
  const skills = useApi<{ skills: CheckItem[] }>(useHasModule('skills') ? '/api/skills' : null);
  const mcp = useApi<{ servers: { name: string; status: string; tool_count?: number }[] }>(useHasModule('mcp') ? '/api/mcp/servers' : null);
  const servers = useMemo(() => mcp.data?.servers.map((s) => ({ name: s.name, description: s.status })), [mcp.data]);
  const input = (field: Field, label: string, extra: { rows?: number; help?: string; numeric?: boolean } = {}) => {
    const id = `builder-${field}`;
    const problem = problemOf(field);
    const common = {
      id,
      value: text(doc, field),
      'aria-invalid': problem ? ('true' as const) : undefined,
      'aria-describedby': `${id}-problem`,
    };
    const onInput = (e: Event) => {
      const v = (e.currentTarget as HTMLInputElement).value;
      if (extra.numeric) setDoc(writeNumber(doc, field, v));
      else set(field, v);
    };
    return (
      <>
        <label for={id}>{label}</label>
        {extra.rows ? (
          <textarea rows={extra.rows} {...common} onInput={onInput} />
        ) : (
          <input {...common} inputMode={extra.numeric ? 'numeric' : undefined} onInput={onInput} />
        )}
        <div id={`${id}-problem`}>
          {problem ? (
            <p class="error" role="alert">
              {problem}
            </p>
          ) : (
            extra.help && <p class="muted">{extra.help}</p>
          )}
        </div>
      </>
    );
  };
  const list = (field: Field, label: string, help: string) => {
    const id = `builder-${field}`;
    const problem = problemOf(field);
    return (
      <>
        <label for={id}>{label}</label>
        <input id={id} value={csv(names(doc, field))} aria-describedby={`${id}-problem`} onChange={(e) => set(field, fromCsv(e.currentTarget.value))} />
        <div id={`${id}-problem`}>{problem ? <p class="error">{problem}</p> : <p class="muted">{help}</p>}</div>
      </>
    );
  };
  return (
    <div class="grid-form">
      {input('name', 'Name')}
      {input('description', 'Description')}
      {input('system_prompt', 'Instructions (system prompt)', { rows: 6 })}
      <ModelField
        provider={text(doc, 'provider')}
        model={text(doc, 'model')}
        problem={[problemOf('provider'), problemOf('model')].filter(Boolean).join('; ') || undefined}
        onChange={(provider, model) => setDoc(write(write(doc, 'provider', provider), 'model', model))}
      />
      <Checklist
        id="builder-tools"
        label="Tools"
        items={tools.data ? [ALL_TOOLS, ...tools.data.tools] : undefined}
        checked={names(doc, 'tools')}
        onChange={(v) => set('tools', v)}
        problem={problemOf('tools')}
        empty="No tools: the tools module is not running."
      />
      <Checklist
        id="builder-skills"
        label="Skills"
        items={skills.data?.skills ?? (skills.error ? [] : undefined)}
        checked={names(doc, 'skills')}
        onChange={(v) => set('skills', v)}
        problem={problemOf('skills')}
        empty="No skills installed."
      />
      <Checklist
        id="builder-mcp"
        label="MCP servers"
        items={servers ?? (mcp.error ? [] : undefined)}
        checked={names(doc, 'mcp_servers')}
        onChange={(v) => set('mcp_servers', v)}
        problem={problemOf('mcp_servers')}
        empty="No MCP servers configured."
      />
      <fieldset>
        <legend>Memory</legend>
        {list('memory_read', 'May read memory keys', 'Patterns, comma-separated: * for all, self.* for its own')}
        {list('memory_write', 'May write memory keys', 'Patterns, comma-separated')}
      </fieldset>
      <fieldset>
        <legend>Budget</legend>
        {input('tokens_per_hour', 'Tokens per hour', { numeric: true, help: 'Empty or 0: no cap of its own' })}
        {input('max_tokens', 'Tokens per reply', { numeric: true, help: 'Empty: the default (4096)' })}
        {input('max_iterations', 'Model calls per turn', { numeric: true, help: 'Empty: the service default' })}
      </fieldset>
    </div>
  );
}
