/** The one-line description of an event that replaces `{{event}}` in a trigger's prompt_template. */
import type { KnownEvent } from './known.ts';

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...` : text);
const json = (value: unknown) => cut(JSON.stringify(value) ?? String(value), 300);

export function describeEvent(e: KnownEvent): string {
  return oneLine(text(e));
}

function text(e: KnownEvent): string {
  // The scheduler's event, read as data: triggers cannot declare the scheduler, which links to triggers itself.
  if ((e.type as string) === 'schedule.fired') {
    const d = e.data as { name?: unknown; status?: unknown };
    return `Scheduled job '${String(d.name)}' ran: ${String(d.status)}`;
  }
  switch (e.type) {
    case 'agent.spawned':
      return `Agent '${e.data.name}' (id: ${e.data.agentId}) was spawned${e.data.parentId ? ` by agent ${e.data.parentId}` : ''}`;
    case 'agent.terminated':
      return `Agent '${e.data.name}' (id: ${e.data.agentId}) was terminated`;
    case 'agent.crashed':
      return `Agent '${e.data.name}' (id: ${e.data.agentId}) crashed: ${cut(e.data.error, 300)}`;
    case 'message.received':
      return `Message to agent ${e.data.agentId}: ${cut(e.data.message, 300)}`;
    case 'turn.completed':
      return `Agent ${e.data.agentId} answered: ${cut(e.data.response, 300)}`;
    case 'tool.invoked':
      return `Tool ${e.data.tool} was invoked${e.data.agentId ? ` by agent ${e.data.agentId}` : ''} (${e.data.isError ? 'error' : 'ok'}, ${Math.round(e.data.ms)} ms)`;
    case 'memory.updated':
      return `Memory ${e.data.operation} on ${e.data.key ? `key '${e.data.key}'` : `entry ${e.data.memoryId ?? ''}`} for agent ${e.data.agentId}`;
    case 'task.posted':
      return `Task posted: ${e.data.taskId} "${e.data.title}"${e.data.assignedTo ? ` for ${e.data.assignedTo}` : ''}${e.data.createdBy ? ` by ${e.data.createdBy}` : ''}`;
    case 'task.claimed':
      return `Task claimed: ${e.data.taskId} "${e.data.title}" by agent ${e.data.agentId}`;
    case 'task.completed':
      return `Task ${e.data.status}: ${e.data.taskId} "${e.data.title}"${e.data.agentId ? ` by agent ${e.data.agentId}` : ''}${e.data.result ? ` result=${cut(e.data.result, 300)}` : ''}`;
    case 'workflow.run_finished':
      return `Workflow '${e.data.workflowName}' run ${e.data.runId} ${e.data.status}${e.data.error ? `: ${cut(e.data.error, 300)}` : ''}`;
    case 'approval.requested':
      return `Approval requested: ${e.data.approvalId}${e.data.tool ? ` for tool ${e.data.tool}` : ''}${e.data.description ? ` (${cut(e.data.description, 200)})` : ''}`;
    case 'approval.resolved':
      return `Approval ${e.data.approvalId} ${e.data.status}${e.data.decidedBy ? ` by ${e.data.decidedBy}` : ''}`;
    case 'custom':
      return `Custom event: type=${e.data.type}, payload=${json(e.data.data)}`;
    default:
      return `${(e as { type: string }).type}: ${json((e as { data: unknown }).data)}`;
  }
}

function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ');
}
