/** What a client frame asks for. Plain non-JSON text is a chat message (spec). */
export type Incoming =
  { kind: 'message'; content: string } | { kind: 'command'; name: string; args: string } | { kind: 'ping' } | { kind: 'invalid'; error: string };

export const COMMANDS = ['new', 'compact', 'model', 'stop', 'usage', 'think', 'models', 'providers'] as const;
export type CommandName = (typeof COMMANDS)[number];

export function parseFrame(text: string): Incoming {
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

/** A message starting with a slash is a chat command. */
function message(content: string): Incoming {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(content.trim());
  return m ? { kind: 'command', name: m[1].toLowerCase(), args: m[2].trim() } : { kind: 'message', content };
}
