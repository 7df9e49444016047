/** What the webhook route sees of the running LINE adapter (absent while the channel is stopped). */
import type { LineEvent } from './inbound.ts';

export interface LineReceiver {
  /** The X-Line-Signature header signs the raw body with the channel secret. */
  accepts(signature: unknown, raw: string): boolean;
  /** Resolves once the event is committed to the journal (or is not one the agent hears); rejects otherwise. */
  take(event: LineEvent): Promise<void>;
}

/** The module's slot for the running receiver: in the module copy's closure, so a reload swaps route and adapter together. */
export interface LineEndpoint {
  current?: LineReceiver;
}
