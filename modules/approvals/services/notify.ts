/**
 * Tells the humans: each new request (and each escalation) is pushed to the paired devices when pairing has a push
 * provider. The outcome is logged, so a request nobody was told about shows in the log.
 */
import type { Logger } from 'pino';
import type { TalonEvent } from '@talon/module-sdk';
import type { PairedDevices } from '@talon/pairing';

export function noticeText(data: TalonEvent<'approval.requested'>['data']): { title: string; message: string } {
  return {
    title: 'Approval needed',
    message: `${data.description ?? `An agent wants to run ${data.tool ?? 'an action'}`}\nApprove: POST /api/approvals/${data.approvalId}/approve (or reject)`,
  };
}

export function notifier(devices: () => PairedDevices | undefined, enabled: () => boolean, log: Logger) {
  return async (event: TalonEvent<'approval.requested'>): Promise<void> => {
    const target = enabled() ? devices() : undefined;
    if (!target) return;
    const outcome = await target.notify(noticeText(event.data));
    if (outcome.sent === 0) log.info({ approvalId: event.data.approvalId, ...outcome }, 'approval request pushed to no device');
    else log.debug({ approvalId: event.data.approvalId, ...outcome }, 'approval request pushed to paired devices');
  };
}
