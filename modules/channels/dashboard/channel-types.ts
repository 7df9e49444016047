/** What the channel routes answer (modules/channels/routes), as the view reads it. */

export type ChannelState = 'connected' | 'connecting' | 'error' | 'stopped';

export interface ChannelRow {
  name: string;
  enabled: boolean;
  has_token: boolean;
  configured: boolean;
  connected: boolean;
  state: ChannelState;
  /** Untrusted (it may quote the platform): shown as text only. */
  last_error: string | null;
}

export interface FieldSpec {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array';
  description?: string;
  enum?: unknown[];
}

export interface ChannelDetail extends ChannelRow {
  description: string;
  source: 'api' | 'config' | null;
  config: Record<string, unknown> | null;
  secrets_set: Record<string, boolean>;
  started_at: string | null;
  last_message_at: string | null;
  messages_received: number;
  messages_sent: number;
  backlog: { inbound: number; outbound: number; failed: number; unknown: number };
  capabilities: { qr: boolean; threads: boolean; media: boolean; typing: boolean };
  fields: { properties: Record<string, FieldSpec>; required?: string[] };
  secret_fields: string[];
}
