/** What a client frame asks for. Plain non-JSON text is a chat message (spec). */
export type Incoming =
  { kind: 'message'; content: string } | { kind: 'command'; name: string; args: string } | { kind: 'ping' } | { kind: 'invalid'; error: string };

/** The commands registry's reading of a chat message: a command, or undefined for a message. */
export type ParseCommand = (text: string) => { name: string; args: string } | undefined;

/**
 * Without the commands registry: a message that reads as a command (a slash, then a word) is still one, so that it is
 * answered that commands are off instead of reaching the agent as text. Only the name matters then.
 */
export function slashCommand(text: string): { name: string; args: string } | undefined {
  const name = /^\/(\S+)/.exec(text.trim())?.[1];
  return name ? { name: name.toLowerCase(), args: '' } : undefined;
}

export function parseFrame(text: string, parseCommand: ParseCommand): Incoming {
  const message = (content: string): Incoming => {
    const command = parseCommand(content);
    return command ? { kind: 'command', ...command } : { kind: 'message', content };
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return message(text);
  }
  if (typeof value === 'string') return message(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return message(text);
  const frame = value as { type?: unknown; content?: unknown; command?: unknown; args?: unknown };
  switch (frame.type) {
    case 'message':
      return typeof frame.content === 'string' ? message(frame.content) : { kind: 'invalid', error: "a message frame needs 'content' (string)" };
    case 'ping':
      return { kind: 'ping' };
    case 'command':
      // The reference client's shape: {type: "command", command, args}.
      return typeof frame.command === 'string'
        ? { kind: 'command', name: frame.command.replace(/^\//, '').toLowerCase(), args: typeof frame.args === 'string' ? frame.args.trim() : '' }
        : { kind: 'invalid', error: "a command frame needs 'command' (string)" };
    default:
      return { kind: 'invalid', error: `unknown message type ${JSON.stringify(frame.type ?? null)}: send {type: "message", content} or {type: "ping"}` };
  }
}
