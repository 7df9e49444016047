/** Operator routes over the outbound journal's failed, unknown and expired rows: list, replay, prune. */
import { notFound, type Routes } from '@talon/module-sdk';
import type { ChannelsParts } from '../services/channels.ts';

const tags = ['channels'];
const query = {
  type: 'object',
  properties: { channel: { type: 'string', minLength: 1, maxLength: 64 }, limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 } },
  additionalProperties: false,
} as const;
const idParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['id'] } as const;

export function journalRoutes(app: Routes, parts: ChannelsParts, notAfterMs: () => number): void {
  app.get(
    '/api/channels/journal/problems',
    { schema: { summary: 'Reply chunks that failed, whose outcome is unknown, or that expired', tags, querystring: query } },
    async (request) => {
      const rows = await parts.journal.problems(request.query.channel, request.query.limit ?? 100);
      const items = rows.map((r) => ({
        id: r.id,
        channel: r.channel,
        chat_id: r.chat_id,
        reply_id: r.reply_id,
        seq: r.seq,
        state: r.state,
        error: r.error,
        attempts: r.attempts,
        created_at: new Date(r.created_at).toISOString(),
        text: textOf(r.payload),
      }));
      return { items, total: items.length };
    },
  );
  app.post(
    '/api/channels/journal/:id/replay',
    { schema: { summary: 'Sends a failed, unknown or expired chunk again', tags, params: idParams } },
    async (request) => {
      const row = await parts.journal.requeue(request.params.id, Date.now() + notAfterMs());
      if (!row) throw notFound(`no failed, unknown or expired chunk '${request.params.id}'`);
      await parts.outbound.deliver(row.reply_id, `${row.channel}\u0000${row.chat_id}`);
      const [after] = (await parts.journal.chunks(row.reply_id)).filter((r) => r.id === row.id);
      parts.events.publish('channel.journal_replayed', { channel: row.channel, id: row.id, state: after?.state ?? 'gone' });
      return { id: row.id, state: after?.state, message_id: after?.message_id ?? null, error: after?.error ?? null };
    },
  );
  app.delete('/api/channels/journal/:id', { schema: { summary: 'Deletes a failed, unknown or expired chunk', tags, params: idParams } }, async (request) => {
    if (!(await parts.journal.prune({ id: request.params.id }))) throw notFound(`no failed, unknown or expired chunk '${request.params.id}'`);
    parts.events.publish('channel.journal_pruned', { id: request.params.id, deleted: 1 });
    return { status: 'deleted', deleted: 1 };
  });
  app.post(
    '/api/channels/journal/prune',
    {
      schema: {
        summary: 'Deletes every failed, unknown or expired chunk (of one channel)',
        tags,
        querystring: { type: 'object', properties: { channel: query.properties.channel }, additionalProperties: false },
      },
    },
    async (request) => {
      const deleted = await parts.journal.prune({ channel: request.query.channel });
      parts.events.publish('channel.journal_pruned', { ...(request.query.channel ? { channel: request.query.channel } : {}), deleted });
      return { status: 'pruned', deleted };
    },
  );
}

function textOf(payload: string): string | null {
  const chunk = JSON.parse(payload) as { text?: unknown };
  return typeof chunk.text === 'string' ? chunk.text : null;
}
