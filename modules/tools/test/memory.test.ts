import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { badRequest } from '@talon/module-sdk';
import { memoryStoreTool } from '../tools/memory-store.ts';
import { memoryRecallTool } from '../tools/memory-recall.ts';
import { memoryListTool } from '../tools/memory-list.ts';
import { NO_MEMORY } from '../tools/memory-common.ts';
import { agentRecord, fakeDeps, FakeKv, toolCtx } from './helpers.ts';

const rw = agentRecord({ capabilities: { memory_read: ['*'], memory_write: ['self.*'] } });

describe('memory tools', () => {
  it('store, recall and list per agent', async () => {
    const kv = new FakeKv();
    const deps = fakeDeps({ memory: kv });
    const ctx = toolCtx(rw);
    assert.deepEqual(await memoryStoreTool(deps).execute({ key: 'user.name', value: 'Ada' }, ctx), {
      content: "Stored value under key 'user.name'.",
      isError: false,
    });
    await memoryStoreTool(deps).execute({ key: 'prefs', value: { theme: 'dark' } }, ctx);
    assert.deepEqual(await kv.get(rw.id, 'user.name'), { key: 'user.name', value: 'Ada' });
    assert.equal((await memoryRecallTool(deps).execute({ key: 'prefs' }, ctx)).content, '{\n  "theme": "dark"\n}');
    assert.deepEqual(await memoryRecallTool(deps).execute({ key: 'nope' }, ctx), { content: "No value found for key 'nope'.", isError: false });
    assert.equal((await memoryListTool(deps).execute({}, ctx)).content, '2 key(s) (offset 0):\n- prefs\n- user.name');
    assert.equal((await memoryListTool(deps).execute({ limit: 1, offset: 1 }, ctx)).content, '1 key(s) (offset 1):\n- user.name');
    const other = toolCtx(agentRecord({ id: '44444444-4444-4444-8444-444444444444', capabilities: { memory_read: ['*'] } }));
    assert.equal((await memoryRecallTool(deps).execute({ key: 'prefs' }, other)).content, "No value found for key 'prefs'.");
  });

  it('a clear error result when the memory module is not loaded', async () => {
    for (const tool of [memoryStoreTool, memoryRecallTool, memoryListTool]) {
      assert.deepEqual(await tool(fakeDeps()).execute({ key: 'k', value: 1 }, toolCtx(rw)), { content: NO_MEMORY, isError: true });
    }
  });

  it('refuses bad keys', async () => {
    const deps = fakeDeps({ memory: new FakeKv() });
    for (const key of ['', 'has space', 'slash/no', 'x'.repeat(257)]) {
      const out = await memoryStoreTool(deps).execute({ key, value: 1 }, toolCtx(rw));
      assert.equal(out.isError, true, key);
    }
  });

  it('respects capabilities.memory_read and memory_write', async () => {
    const deps = fakeDeps({ memory: new FakeKv() });
    const readOnly = toolCtx(agentRecord({ capabilities: { memory_read: ['*'] } }));
    const w = await memoryStoreTool(deps).execute({ key: 'k', value: 1 }, readOnly);
    assert.equal(w.isError, true);
    assert.match(w.content, /capabilities\.memory_write is empty/);
    const narrow = toolCtx(agentRecord({ capabilities: { memory_read: ['notes.*'], memory_write: ['notes.*'] } }));
    assert.equal((await memoryStoreTool(deps).execute({ key: 'notes.a', value: 1 }, narrow)).isError, false);
    assert.match((await memoryStoreTool(deps).execute({ key: 'secret', value: 1 }, narrow)).content, /not permitted by capabilities\.memory_write/);
    assert.match((await memoryRecallTool(deps).execute({ key: 'secret' }, narrow)).content, /not permitted by capabilities\.memory_read/);
    const none = toolCtx(agentRecord());
    assert.match((await memoryListTool(deps).execute({}, none)).content, /capabilities\.memory_read is empty/);
  });

  it("turns the memory service's refusals into error results", async () => {
    const kv = new FakeKv();
    // The service is async: a refusal is a rejection, which the tool must await to catch.
    kv.set = async () => {
      throw badRequest('value too large');
    };
    const out = await memoryStoreTool(fakeDeps({ memory: kv })).execute({ key: 'k', value: 'x' }, toolCtx(rw));
    assert.deepEqual(out, { content: 'Failed to store the value: value too large', isError: true });
  });
});
