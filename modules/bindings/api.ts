/** Contract of the bindings module: which agent a message from a channel should reach. */
import { serviceRef } from '@talon/module-sdk';

export interface MatchRule {
  channel?: string;
  account_id?: string;
  peer_id?: string;
  guild_id?: string;
  roles?: string[];
}

export interface Binding {
  index: number;
  agent: string;
  match_rule: MatchRule;
  created_at: string;
}

/** Served from memory: a binding added or removed by another process sharing the database counts within a second. */
export interface BindingRouter {
  /** Bindings, most specific first (the order the router tries them). */
  list(): Binding[];
  /** The agent (name or id as bound) of the first binding the message matches. */
  route(message: { channel: string; account_id?: string; peer_id?: string; guild_id?: string; roles?: string[] }): string | undefined;
}

export const bindingRouter = serviceRef<BindingRouter>('bindings.router');
