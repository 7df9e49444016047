/**
 * Session titles written by the model ([agents] session_titles = "model"; off by default, as it is a model call the
 * user did not ask for in the chat). After the first turn of a session without a label, the agent's model names it
 * in a few words and the name becomes the label. Without the setting the title is the first line of the first
 * message (titleOf in sessions.ts).
 */
import type { TurnResult } from '@talon/agents';
import { textOf } from './history.ts';
import type { LoopDeps } from './loop.ts';
import { modelRef } from './model.ts';

const INSTRUCTIONS = 'You name conversations. Answer with a title of at most six words for the conversation below: no quotes, no final period, nothing else.';
const TITLE_CHARS = 80;

/** Names the session when the setting is on and this was its first exchange; failures are logged, never thrown. */
export async function titleByModel(deps: LoopDeps, result: TurnResult): Promise<void> {
  if (deps.config().session_titles !== 'model') return;
  const { agentId, sessionId } = result;
  try {
    const agent = deps.registry.get(agentId);
    const session = await deps.sessions.get(sessionId);
    if (!agent || !session || session.label !== null) return;
    const spoken = (await deps.sessions.messages(sessionId)).filter((m) => m.role === 'User' && m.content.trim());
    if (spoken.length !== 1) return;
    const answer = await deps.llm.complete(modelRef(agent), {
      system: INSTRUCTIONS,
      messages: [{ role: 'user', content: [{ type: 'text', text: `User: ${spoken[0].content}\n\nAssistant: ${result.response}`.slice(0, 8000) }] }],
      maxTokens: 30,
      meta: { agentId, sessionId, purpose: 'title' },
    });
    const title = textOf(answer.content)
      .trim()
      .split('\n', 1)[0]
      .replace(/^["'“\s]+|["'”.\s]+$/g, '')
      .slice(0, TITLE_CHARS);
    // A title another session of the agent already has (labels are unique per agent) leaves this one untitled.
    if (title && !(await deps.sessions.byLabel(agentId, title))) await deps.sessions.setLabel(sessionId, title);
  } catch (err) {
    deps.log.warn({ err, session_id: sessionId }, 'the model could not title the session');
  }
}
