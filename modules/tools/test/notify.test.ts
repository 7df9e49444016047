import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { notifyOwnerTool } from '../tools/notify-owner.ts';
import { agentRecord, fakeDeps, toolCtx } from './helpers.ts';

describe('notify_owner', () => {
  const tool = notifyOwnerTool(fakeDeps());

  it('queues "[NOTIFY] reason: summary" and answers with the reference text', async () => {
    const ctx = toolCtx(agentRecord());
    const out = await tool.execute({ reason: 'deploy', summary: 'prod is down' }, ctx);
    assert.deepEqual(out, { content: 'Notice queued for the owner. Do not repeat the summary in your public reply.', isError: false });
    assert.deepEqual(ctx.notices, ['[NOTIFY] deploy: prod is down']);
  });

  it('strips control characters and caps each field at 4096 characters', async () => {
    const ctx = toolCtx(agentRecord());
    await tool.execute({ reason: ' a\u0007b\n ', summary: 'x'.repeat(5000) }, ctx);
    assert.equal(ctx.notices[0], `[NOTIFY] ab: ${'x'.repeat(4096)}`);
  });

  it('refuses empty or missing fields without queuing anything', async () => {
    const ctx = toolCtx(agentRecord());
    for (const input of [{ reason: 'r' }, { reason: '  ', summary: 's' }, { reason: 'r', summary: 5 }]) {
      const out = await tool.execute(input, ctx);
      assert.deepEqual(out, { content: "Error: notify_owner requires non-empty 'reason' and 'summary' string fields.", isError: true });
    }
    assert.deepEqual(ctx.notices, []);
  });
});
