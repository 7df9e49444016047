/** A session as a file people keep: Markdown to read, or the session's JSON (GET /api/sessions/{id}/export). */
import type { sessionView } from '../routes/sessions.ts';

export type SessionJson = Awaited<ReturnType<typeof sessionView>>;

/** The conversation as Markdown: who spoke and when, tool calls as quoted lines, a stopped reply marked. */
export function sessionMarkdown(session: SessionJson, agentName: string | null): string {
  const lines = [`# ${session.title ?? `Session ${session.session_id}`}`, ''];
  lines.push(`Agent: ${agentName ?? session.agent_id} · session ${session.session_id} · exported ${new Date().toISOString()}`, '');
  if (session.summary) lines.push('## Summary of earlier messages', '', session.summary, '');
  for (const m of session.messages) {
    const calls = m.tool_calls ?? [];
    const results = m.tool_results ?? [];
    if (!m.content && !calls.length && !results.length && !m.stopped) continue;
    if (results.length && !m.content) {
      for (const r of results) lines.push(`> Tool result${r.is_error ? ' (error)' : ''}: ${oneLine(r.content)}`, '');
      continue;
    }
    lines.push(`## ${m.role === 'User' ? 'You' : 'Agent'} · ${m.created_at}`, '');
    if (m.content) lines.push(m.content, '');
    for (const c of calls) lines.push(`> Tool \`${c.name}\` ${oneLine(JSON.stringify(c.input))}`, '');
    if (m.stopped) lines.push('*(stopped)*', '');
  }
  return lines.join('\n');
}

/** Tool text on one quoted line, shortened: the export is for reading, the JSON keeps everything. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}
