/**
 * Contract of the memory module. The agents module (export/import, tools)
 * and the built-in memory tools call these services.
 */
import { defineEvents, payload, serviceRef, type PayloadsOf } from '@talon/module-sdk';

export interface KvEntry {
  key: string;
  value: unknown;
}

/** Per-agent key-value memory. Values are any JSON. Every method reads or writes the database, so each is async. */
export interface KvMemory {
  get(agentId: string, key: string): Promise<KvEntry | undefined>;
  /** Rejects with HttpError 400/413 for a bad key or an oversized value. */
  set(agentId: string, key: string, value: unknown): Promise<void>;
  delete(agentId: string, key: string): Promise<boolean>;
  list(agentId: string, page?: { limit?: number; offset?: number }): Promise<KvEntry[]>;
  /** Everything of one agent, for export; import replaces nothing it does not name. */
  exportAll(agentId: string): Promise<KvEntry[]>;
  importAll(agentId: string, entries: KvEntry[]): Promise<number>;
  deleteAgent(agentId: string): Promise<void>;
}

export const kvMemory = serviceRef<KvMemory>('memory.kv');

export interface RecallHit {
  id: string;
  content: string;
  /** 0..1: text (BM25) and, when embeddings exist, vector similarity. */
  relevance: number;
  /** 'user' | 'session' | 'agent'. */
  level?: string;
  category?: string | null;
}

/** The proactive semantic memory, as the agent loop and tools see it. */
export interface SemanticMemory {
  /** Hybrid search; hits count as recalled (they decay slower). sessionId leaves out other sessions' session-level entries. */
  search(query: string, options: { agentId?: string; limit?: number; sessionId?: string }): Promise<RecallHit[]>;
  /** level: 'user' | 'session' (default) | 'agent'; throws HttpError 400 for another level, 413 for oversized content. */
  add(entry: {
    content: string;
    agentId?: string;
    userId?: string;
    tags?: string[];
    level?: string;
    sessionId?: string;
    category?: string;
    source?: string;
  }): Promise<{ id: string }>;
  /** Merges the agent's near-duplicate entries at the configured duplicate_threshold (auto-dream runs it). */
  consolidate(agentId: string): Promise<{ merged_count: number; groups: Array<{ kept: string; merged: string[] }> }>;
}

export const semanticMemory = serviceRef<SemanticMemory>('memory.semantic');

export const memoryEvents = defineEvents('memory', {
  'memory.updated': payload<{ agentId: string; operation: 'set' | 'delete' | 'remember' | 'forget' | string; key?: string; memoryId?: string }>(),
});
/** What a write changed, as memory.updated tells it. */
export type MemoryChange = PayloadsOf<typeof memoryEvents>['memory.updated'];
