/** The [a2a] section: how this instance presents itself as an A2A agent, and the rules for talking to others. */
import type { FromSchema } from '@talon/module-sdk';

export const a2aConfigSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, default: 'Talon', description: 'name on the agent card of this instance' },
    description: { type: 'string', default: 'Agents hosted by a Talon agent runtime', description: 'description on the agent card' },
    public_url: {
      type: 'string',
      default: '',
      description: 'base URL other agents reach this instance at (empty: http://<the listen address>); the card URLs are built from it',
    },
    public_card: {
      type: 'boolean',
      default: false,
      description:
        'serve the agent cards (/.well-known/agent.json, agent-card.json and the per-agent ones) without the bearer although api_key is set; they list every agent',
    },
    default_agent: {
      type: 'string',
      default: '',
      description: 'agent (name or id) that answers messages sent to the instance card URL without metadata.agent_id (empty: the only agent, if there is one)',
    },
    allowed_hosts: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description:
        "hosts (names or IPs, optionally with :port) that discovery and sending may reach although they are loopback or private, e.g. ['127.0.0.1', 'agents.lan']",
    },
    task_retention_hours: { type: 'integer', minimum: 1, default: 168, description: 'finished tasks older than this are deleted (served and sent tasks)' },
    max_tasks: { type: 'integer', minimum: 10, default: 10000, description: 'most tasks kept; the oldest finished ones go first' },
    max_message_chars: { type: 'integer', minimum: 1, default: 200000, description: 'longest message text accepted from or sent to an A2A agent' },
    request_timeout_secs: {
      type: 'integer',
      minimum: 1,
      maximum: 3600,
      default: 300,
      description: 'time limit of one request to an external agent (a blocking send waits for the reply)',
    },
  },
  additionalProperties: false,
} as const;

export type A2aConfig = FromSchema<typeof a2aConfigSchema, { keepDefaultedPropertiesOptional: false }>;
