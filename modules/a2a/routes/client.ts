/** /api/a2a/*: external A2A agents — discover, list, send, and the status of sent tasks. */
import type { Routes } from '@talon/module-sdk';
import { messageText } from './server.ts';
import type { RemoteAgents } from '../services/remote.ts';
import { agentView } from '../services/remote.ts';

const tags = ['a2a'];
const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 2048 } }, required: ['id'] } as const;
const textOrMessage = {
  anyOf: [
    { type: 'string' },
    {
      type: 'object',
      properties: { role: { type: 'string' }, parts: { type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } }, maxItems: 100 } },
      required: ['parts'],
    },
  ],
} as const;
const sendBody = {
  type: 'object',
  properties: {
    agent_id: { type: 'string', minLength: 1, description: 'the external agent: its id, URL or name (GET /api/a2a/agents)' },
    message: textOrMessage,
    blocking: { type: 'boolean', default: true, description: 'false: return the submitted task at once (GET /api/a2a/tasks/{id} follows it)' },
  },
  required: ['agent_id', 'message'],
} as const;

export function clientRoutes(app: Routes, remote: RemoteAgents, maxChars: () => number): void {
  app.get('/api/a2a/agents', { schema: { summary: 'External A2A agents discovered so far', tags } }, async () => {
    // Read afresh (not a hot path): an agent another process discovered a moment ago is listed.
    await remote.load();
    const agents = remote.list();
    return { agents, total: agents.length };
  });

  app.get('/api/a2a/agents/:id', { schema: { summary: 'One external A2A agent (id, URL or name) with its card', tags, params: idParams } }, async (request) =>
    agentView(await remote.get(request.params.id)),
  );

  app.post(
    '/api/a2a/discover',
    {
      schema: {
        summary: 'Fetch the agent card at <url>/.well-known/agent.json and remember the agent (SSRF rules apply; see [a2a] allowed_hosts)',
        tags,
        body: {
          type: 'object',
          properties: {
            url: { type: 'string', minLength: 1, maxLength: 2048 },
            token: {
              type: 'string',
              maxLength: 8192,
              description:
                "bearer token the agent asks for (another Talon's api_key): sent only to the agent's origin, stored encrypted, never read back; '' removes it",
            },
          },
          required: ['url'],
          additionalProperties: false,
        },
      },
    },
    async (request) => ({ status: 'discovered', agent: await remote.discover(request.body.url, request.body.token) }),
  );

  const send = async (body: { agent_id: string; message: string | { parts: Array<{ text?: string }> }; blocking?: boolean }) =>
    remote.send(body.agent_id, messageText(body.message, maxChars()), body.blocking !== false);

  app.post('/api/a2a/send', { schema: { summary: 'Send a message to an external A2A agent and wait for its reply', tags, body: sendBody } }, async (request) =>
    send(request.body),
  );
  app.post('/api/a2a/tasks/send', { schema: { summary: 'Submit a task to an external A2A agent', tags, body: sendBody } }, async (request) =>
    send(request.body),
  );

  app.get(
    '/api/a2a/tasks/:id',
    { schema: { summary: 'A task sent to an external agent (refreshed from it while running)', tags, params: idParams } },
    async (request) => remote.task(request.params.id),
  );
  app.get('/api/a2a/tasks/:id/status', { schema: { summary: 'The status of a task sent to an external agent', tags, params: idParams } }, async (request) => {
    const task = await remote.task(request.params.id);
    return { task_id: task.task_id, remote_task_id: task.remote_task_id, agent_id: task.agent_id, status: task.status };
  });
}
