/** The serviceUrl each conversation is answered at (migrations/0001_conversations.sql), by chat id. */
import type { Store } from '@talon/module-sdk';

export interface Conversations {
  serviceUrl(chatId: string): Promise<string | undefined>;
  remember(chatId: string, serviceUrl: string): Promise<void>;
}

export function conversations(store: Store): Conversations {
  return {
    async serviceUrl(chatId) {
      const row = await store.one<{ service_url: string }>('SELECT service_url FROM channel_teams_conversations WHERE conversation_id = ?', [chatId]);
      return row?.service_url;
    },
    async remember(chatId, serviceUrl) {
      await store.run(
        'INSERT INTO channel_teams_conversations (conversation_id, service_url, updated_at) VALUES (?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET service_url = excluded.service_url, updated_at = excluded.updated_at',
        [chatId, serviceUrl, Date.now()],
      );
    },
  };
}
