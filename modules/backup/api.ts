/** Contract of the backup module: the events it publishes (the audit trail records them). */
export {};

declare module '@talon/module-sdk' {
  interface TalonEvents {
    'backup.created': { filename: string; components: string[]; sizeBytes: number };
    'backup.deleted': { filename: string };
    'backup.restored': { filename: string; components: string[]; files: number; modulesRestarted: string[] };
    'backup.restore_failed': { filename: string; error: string };
  }
}
