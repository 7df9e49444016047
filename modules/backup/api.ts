/** Contract of the backup module: the events it publishes (the audit trail records them). */
import { defineEvents, payload } from '@talon/module-sdk';

export const backupEvents = defineEvents('backup', {
  'backup.created': payload<{ filename: string; components: string[]; sizeBytes: number }>(),
  'backup.deleted': payload<{ filename: string }>(),
  'backup.restored': payload<{ filename: string; components: string[]; files: number; modulesRestarted: string[] }>(),
  'backup.restore_failed': payload<{ filename: string; error: string }>(),
});
