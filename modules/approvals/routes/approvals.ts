import { notFound, openSse, readPage, requireUuid, type EventChannel, type Routes } from '@talon/module-sdk';
import type { AgentRegistry } from '@talon/agents';
import type { approvalEvents } from '@talon/approvals';
import { view, type Approvals } from '../services/approvals.ts';
import type { ApprovalStore } from '../services/store.ts';
import { approveBody, auditQuery, batchBody, createBody, idParams, listQuery, rejectBody } from './schemas.ts';

export interface ApprovalRouteDeps {
  approvals: Approvals;
  store: ApprovalStore;
  agents: () => AgentRegistry;
  events: EventChannel<typeof approvalEvents>;
}

const tags = ['approvals'];

export function approvalRoutes(app: Routes, deps: ApprovalRouteDeps): void {
  const { approvals, store } = deps;
  const known = async (id: string) => {
    const approval = await approvals.get(requireUuid(id, 'approval id'));
    if (!approval) throw notFound(`approval '${id}' not found`);
    return approval;
  };

  app.get('/api/approvals', { schema: { summary: 'Approval requests, pending first, then newest', tags, querystring: listQuery } }, async (request) => {
    const page = readPage(request.query, { limit: 50, max: 500 });
    const { agent_id: agentId, status } = request.query;
    const filter = { agentId: agentId === undefined ? undefined : requireUuid(agentId, 'agent_id'), status };
    return { approvals: (await store.list(filter, page.limit, page.offset)).map(view), total: await store.total(filter), ...page };
  });

  app.post('/api/approvals', { schema: { summary: 'Asks a human to approve an action', tags, body: createBody } }, async (request, reply) => {
    const agentId = requireUuid(request.body.agent_id, 'agent_id');
    const agent = deps.agents().get(agentId);
    if (!agent) throw notFound(`agent '${agentId}' not found`);
    const { action, description, payload } = request.body;
    // The push goes on after the answer; GET /api/approvals/{id} shows `notified` once it is known.
    const { approval } = await approvals.create({ agent, action, description, payload });
    return reply.code(201).send({ id: approval.id, status: approval.status, expires_at: approval.expires_at });
  });

  app.get('/api/approvals/count', { schema: { summary: 'Number of pending approvals', tags } }, async () => ({ pending: approvals.pendingCount() }));

  app.get('/api/approvals/audit', { schema: { summary: 'The decision trail, newest first', tags, querystring: auditQuery } }, async (request) => {
    const page = readPage(request.query, { limit: 50, max: 500 });
    const agentId = request.query.agent_id === undefined ? undefined : requireUuid(request.query.agent_id, 'agent_id');
    return { ...(await store.auditPage({ agentId, ...page })), ...page };
  });

  app.get('/api/approvals/stream', { schema: { summary: 'SSE of approval.requested and approval.resolved events', tags } }, async (request, reply) => {
    const sse = openSse(request, reply);
    // An observer: the requests and decisions of every process sharing the home, not only this one's.
    const off = deps.events.subscribe(
      ['approval.requested', 'approval.resolved'],
      (event) => {
        sse.send(event.type, { ...event.data, at: event.at });
      },
      { remote: true },
    );
    sse.onClose(off);
  });

  app.get('/api/approvals/:id', { schema: { summary: 'One approval request', tags, params: idParams } }, async (request) => known(request.params.id));

  app.post(
    '/api/approvals/batch',
    { schema: { summary: 'Approves or rejects several requests at once: all or none', tags, body: batchBody } },
    async (request) => {
      const { ids, decision, totp_code: totpCode, reason } = request.body;
      const canonical = ids.map((id) => requireUuid(id, 'approval id'));
      const results = await approvals.batch(canonical, { approve: decision === 'approve', decidedBy: 'api', totpCode, reason });
      return { results, resolved: results.length };
    },
  );

  app.post('/api/approvals/:id/approve', { schema: { summary: 'Approves a pending request', tags, params: idParams, body: approveBody } }, async (request) => {
    await known(request.params.id);
    return approvals.decide(request.params.id.toLowerCase(), { approve: true, decidedBy: 'api', totpCode: request.body.totp_code });
  });

  app.post('/api/approvals/:id/reject', { schema: { summary: 'Rejects a pending request', tags, params: idParams, body: rejectBody } }, async (request) => {
    await known(request.params.id);
    return approvals.decide(request.params.id.toLowerCase(), { approve: false, decidedBy: 'api', reason: request.body.reason });
  });
}
