/** Building and reading A2A messages (the SDK's proto objects) as plain text. */
import { randomUUID } from 'node:crypto';
import type { Message, Part, Role, TaskStatus, TaskState } from '@a2a-js/sdk';

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** The text of a message: its text parts joined; data parts as JSON; files named. */
export function textOf(message: Message | undefined): string {
  if (!message) return '';
  return message.parts
    .map((part) => {
      const c = part.content;
      if (!c) return '';
      if (c.$case === 'text') return c.value;
      if (c.$case === 'data') return JSON.stringify(c.value);
      return `[file ${part.filename || (c.$case === 'url' ? c.value : 'attachment')}${part.mediaType ? ` (${part.mediaType})` : ''}]`;
    })
    .filter(Boolean)
    .join('\n');
}

export function message(role: Role, text: string, ids: { taskId?: string; contextId?: string } = {}): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function status(state: TaskState, reply?: Message): TaskStatus {
  return { state, message: reply, timestamp: new Date().toISOString() };
}
