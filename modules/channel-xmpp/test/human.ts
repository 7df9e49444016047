/**
 * The person on the other side: an @xmpp/client session of its own on the same prosody, which joins rooms, sends
 * messages and chat states, and records every message stanza the server delivers to it, with when it arrived.
 */
import { client, xml, type Client, type Element } from '@xmpp/client';
import { waitFor } from '@talon/testing';

export class Human {
  readonly stanzas: Array<{ at: number; stanza: Element }> = [];

  private constructor(
    readonly session: Client,
    readonly jid: string,
  ) {}

  static async connect(service: string, username: string, password: string): Promise<Human> {
    const session = client({ service, domain: 'localhost', username, password, resource: 'human' });
    session.reconnect.stop();
    session.on('error', () => undefined);
    const h = new Human(session, `${username}@localhost`);
    session.on('element', (stanza) => {
      if (stanza.name === 'message' || stanza.name === 'presence') h.stanzas.push({ at: Date.now(), stanza });
    });
    const online = new Promise<void>((resolve) => session.on('online', () => resolve()));
    await session.connect(service);
    await session.open({ domain: 'localhost' });
    await online;
    // Nothing is sent before stream management is on: @xmpp/client miscounts the stanzas of that window and the
    // server then closes the stream ("acknowledged more stanzas than sent").
    await waitFor(() => session.streamManagement.enabled, 10_000, `${username}: stream management enabled`);
    await session.send(xml('presence'));
    return h;
  }

  /** Joins `room` as `nick` and waits until the room lists `waitFor` (the bot) among its occupants. */
  async join(room: string, nick: string, occupant?: string): Promise<void> {
    await this.session.send(xml('presence', { to: `${room}/${nick}` }, xml('x', { xmlns: 'http://jabber.org/protocol/muc' })));
    const present = (who: string) => () =>
      this.stanzas.some(({ stanza }) => stanza.name === 'presence' && stanza.attrs.from === `${room}/${who}` && stanza.attrs.type !== 'unavailable');
    await waitFor(present(nick), 10_000, `${nick} in ${room}`);
    if (occupant) await waitFor(present(occupant), 15_000, `${occupant} in ${room}`);
  }

  async say(to: string, text: string, options: { group?: boolean; thread?: string; id?: string } = {}): Promise<void> {
    await this.session.send(
      xml(
        'message',
        { to, type: options.group ? 'groupchat' : 'chat', id: options.id ?? crypto.randomUUID() },
        xml('body', null, text),
        ...(options.thread ? [xml('thread', null, options.thread)] : []),
      ),
    );
  }

  /** Message stanzas from `from` (a bare JID matches any of its resources), in arrival order. */
  messages(from: string): Element[] {
    const bare = (a: string | undefined) => (a ?? '').split('/')[0]!.toLowerCase();
    return this.stanzas
      .map(({ stanza }) => stanza)
      .filter((s) => s.name === 'message' && (from.includes('/') ? s.attrs.from === from : bare(s.attrs.from) === from.toLowerCase()));
  }

  /** The bodies of the messages from `from`, in `thread` (or any thread when absent). */
  bodies(from: string, thread?: string): string[] {
    return this.messages(from)
      .filter((s) => s.getChildText('body') !== null && (thread === undefined || s.getChildText('thread') === thread))
      .map((s) => s.getChildText('body')!);
  }

  /** How many chat states `state` came from `from`. */
  chatStates(from: string, state: string): number {
    return this.messages(from).filter((s) => s.getChild(state, 'http://jabber.org/protocol/chatstates') && s.getChildText('body') === null).length;
  }

  async close(): Promise<void> {
    await this.session.stop().catch(() => undefined);
  }
}
