/**
 * The gate on tool calls: a call the policy names is not run and not waited for — the model gets a "waiting for
 * approval" result with the request id and the turn goes on (the same call asked again while it waits joins that
 * request). After the decision the resumer runs the held call (approved) and starts a turn of the same session from
 * the outcome, given to the model as the call's result (TurnRequest.resumes), not as a user message.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';
import type { AgentRunner, AgentTools, HeldCallOutcome, HeldToolCall, ToolCallInfo } from '@talon/agents';
import type { ApprovalConfig } from '../config.ts';
import type { Approvals, Created, Outcome } from './approvals.ts';
import type { NoticeOutcome } from './notify.ts';
import { needsApproval } from './policy.ts';

export interface GateDeps {
  approvals: () => Approvals;
  config: () => ApprovalConfig;
  tools: () => AgentTools;
  runner: () => AgentRunner;
  log: Logger;
}

/** Marks the execution of an approved call, so the gate lets exactly that call through once (not calls it makes in turn). */
export type ApprovedRun = AsyncLocalStorage<{ tool: string; used: boolean }>;

function passApproved(approved: ApprovedRun, tool: string): boolean {
  const pass = approved.getStore();
  if (!pass || pass.used || pass.tool !== tool) return false;
  pass.used = true;
  return true;
}

export function gateToolCall(deps: GateDeps, approved: ApprovedRun) {
  return async (call: ToolCallInfo): Promise<{ deny: string; held: HeldToolCall } | { deny: string } | undefined> => {
    if (passApproved(approved, call.tool) || !needsApproval(deps.config(), call.tool)) return undefined;
    let created: Created;
    try {
      created = await deps.approvals().create({
        agent: call.agent,
        action: call.tool,
        description: `${call.agent.name} wants to run ${call.tool}`,
        payload: { tool: call.tool, input: call.input, session_id: call.sessionId, call_id: call.callId },
        held: { tool: call.tool, input: call.input, session_id: call.sessionId, call_id: call.callId },
      });
    } catch (err) {
      return { deny: `it needs human approval and the request could not be made: ${(err as Error).message}` };
    }
    // Waits for the push (bounded by its own timeout), so the agent knows whether a human was told.
    const notice = await created.notice;
    const { id, expires_at: expiresAt } = created.approval;
    const again = created.repeated ? 'You asked for this same call again: it is the same request, no new one was made. ' : '';
    return { deny: again + waitingText(created.approval, notice), held: { approvalId: id, expiresAt } };
  };
}

/** What the model gets instead of the tool's result while the call waits. */
export function waitingText(approval: { id: string; expires_at: string }, notice: NoticeOutcome): string {
  const head = `waiting for human approval (request ${approval.id}, expires ${approval.expires_at}). It was not run yet; you will get the outcome in a later message.`;
  if (notice.notified) return `${head} The owners were notified. Carry on with other work or tell the user you are waiting.`;
  return (
    `${head} No human was notified (${notice.reason ?? 'no push reached anyone'}): the request only waits in the approvals inbox ` +
    '(GET /api/approvals) until someone opens it or it expires. Tell the user it needs their approval there; carry on with other work meanwhile.'
  );
}

function outcomeText(id: string, tool: string, how: Parameters<Outcome>[1], result?: string): string {
  const head = `[approval ${id}] `;
  if (how === 'approved') return `${head}A human approved your ${tool} call; it ran. Its result:\n${result ?? ''}`;
  if (how === 'rejected') return `${head}A human rejected your ${tool} call: it was not run. Do not retry it without asking.`;
  if (how === 'skipped') return `${head}Your ${tool} call got no decision in time and was skipped: it was not run. Continue without it.`;
  return `${head}Your ${tool} call got no decision in time and was denied: it was not run.`;
}

/** Runs or refuses a held call after its decision, then lets the agent continue with the outcome. */
export function resumer(deps: GateDeps, approved: ApprovedRun): Outcome {
  return (approval, how) => {
    const held = approval.held;
    if (!held) return;
    void (async () => {
      let result: string | undefined;
      let runFailed = false;
      if (how === 'approved') {
        const run = await approved
          .run({ tool: held.tool, used: false }, () =>
            deps.tools().invoke({ tool: held.tool, input: held.input, agentId: approval.agent_id, signal: new AbortController().signal, origin: 'approval' }),
          )
          .catch((err: Error) => ({ output: { content: `the tool could not run: ${err.message}`, isError: true } }));
        result = run.output.content;
        runFailed = Boolean(run.output.isError);
      }
      if (!deps.config().resume_agent) return;
      const outcome: HeldCallOutcome = {
        // Requests held before calls carried their id get one (short: providers bound the length of call ids).
        callId: held.call_id ?? approval.id.replaceAll('-', ''),
        approvalId: approval.id,
        tool: held.tool,
        input: held.input,
        status: how,
        content: outcomeText(approval.id, held.tool, how, result),
        isError: how !== 'approved' || runFailed,
      };
      await deps.runner().run({ agentId: approval.agent_id, sessionId: held.session_id, message: '', origin: 'approval', resumes: outcome });
    })().catch((err: Error) => deps.log.warn({ err, approvalId: approval.id }, 'could not deliver an approval outcome to the agent'));
  };
}
