/**
 * Contract of the triggers module: deliveries (where the replies of background turns go — triggers, schedules,
 * task wake-ups) and the hook a channel module taps to send them to an agent's home channel.
 */
import { AsyncSeriesBailHook, defineHooks, serviceRef } from '@talon/module-sdk';

export type DeliverySource = 'trigger' | 'schedule' | 'task';

/** A reply of a turn nobody was waiting for, or why there was none. */
export interface Delivery {
  id: string;
  agent_id: string;
  source: DeliverySource;
  /** The trigger, job or task that started the turn. */
  source_id: string;
  /** The session the turn ran in: the reply is kept there in any case. */
  session_id: string | null;
  /** 'delivered': sent to the home channel; 'kept': no home channel, the reply stays in the session; 'failed': the turn failed. */
  status: 'delivered' | 'kept' | 'failed';
  /** The home channel it went to. */
  channel: string | null;
  response: string | null;
  error: string | null;
  /** One line on what caused the turn (a trigger's event, a job's name). */
  cause: string | null;
  created_at: string;
}

export interface DeliveryRequest {
  agentId: string;
  source: DeliverySource;
  sourceId: string;
  sessionId?: string;
  response?: string;
  error?: string;
  cause?: string;
}

export interface Deliveries {
  /** Offers the reply to the homeChannel hook, then records where it went (also a failure). */
  deliver(request: DeliveryRequest): Promise<Delivery>;
}

export const deliveries = serviceRef<Deliveries>('triggers.deliveries');

/** What a channel module gets to deliver. */
export interface HomeDelivery {
  agentId: string;
  agentName: string;
  sessionId?: string;
  text: string;
  source: DeliverySource;
  sourceId: string;
}

export const triggerHooks = defineHooks('triggers.hooks', () => ({
  /**
   * Send a background reply to the agent's home channel (the channel the agent is registered under). Answer the
   * channel's name when it was sent; undefined when the agent has none there (the next tap is asked).
   */
  homeChannel: new AsyncSeriesBailHook<[HomeDelivery], string | undefined>(['delivery']),
}));

/** A trigger another module creates and owns (a hand's triggers): the fields of POST /api/triggers it needs. */
export interface TriggerRequest {
  agentId: string;
  /** A pattern as POST /api/triggers takes it ({lifecycle: {}}, "task_posted"...). */
  pattern: unknown;
  promptTemplate: string;
  enabled?: boolean;
  maxFires?: number;
}

export interface TriggerSummary {
  id: string;
  agent_id: string;
  enabled: boolean;
  fire_count: number;
}

export interface OwnedTriggers {
  /** Validates like the API (rejects with HttpError 400/404 naming the problem). */
  create(request: TriggerRequest): Promise<TriggerSummary>;
  get(id: string): Promise<TriggerSummary | undefined>;
  /** False when there is no such trigger. */
  setEnabled(id: string, enabled: boolean): Promise<boolean>;
  /** False when there was no such trigger. */
  remove(id: string): Promise<boolean>;
}

export const ownedTriggers = serviceRef<OwnedTriggers>('triggers.owned');
