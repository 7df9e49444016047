/**
 * Tells the humans: each new request (and each escalation) is pushed to the paired devices when pairing has a push
 * provider. The outcome says whether anyone was reached and, if not, why — the gate passes that on to the agent, so
 * an agent never believes a human was asked when nobody was (the reference's lesson, openclaw#95800).
 */
import type { PairedDevices } from '@talon/pairing';

export interface NoticeOutcome {
  /** At least one device got the push. */
  notified: boolean;
  sent: number;
  failed: number;
  /** Why nobody was reached, when so. */
  reason?: string;
}

export interface Notice {
  approvalId: string;
  description: string;
}

export type Notify = (notice: Notice) => Promise<NoticeOutcome>;

export function noticeText(notice: Notice): { title: string; message: string } {
  return {
    title: 'Approval needed',
    message: `${notice.description}\nApprove: POST /api/approvals/${notice.approvalId}/approve (or reject)`,
  };
}

export function devicePush(devices: () => PairedDevices | undefined, enabled: () => boolean): Notify {
  return async (notice) => {
    if (!enabled()) return { notified: false, sent: 0, failed: 0, reason: 'device push is off ([approval] notify_devices = false)' };
    const target = devices();
    if (!target) return { notified: false, sent: 0, failed: 0, reason: 'the pairing module is not running' };
    const { sent, failed, skipped } = await target.notify(noticeText(notice));
    if (sent > 0) return { notified: true, sent, failed };
    return { notified: false, sent, failed, reason: skipped ?? `every push failed (${failed})` };
  };
}
