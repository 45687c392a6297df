/**
 * Backups that restore: one consistent archive of everything a node on the embedded store holds
 * (parts: records, files, tls), taken through the running server's control socket or directly,
 * on a schedule with uploads to S3-compatible storage; restore into an empty data dir, verified.
 * Other modules import this file only.
 */

export { BackupCommandError, backupCommand, type CommandResult } from './backup.command'
export { type ControlSocket, controlSocketPath, startControlSocket } from './backup.control'
export { BACKUP_FORMAT, type BackupResult, createBackup } from './backup.create'
export { type BackupPart, filesPart, nodeParts, recordsPart, tlsPart } from './backup.parts'
export { fileSha256, RestoreFailedError, RestoreRefusedError, type RestoreResult, restoreBackup } from './backup.restore'
export { backupRoutes } from './backup.routes'
export { BackupStatus } from './backup.schema'
export { type BackupSchedule, type BackupService, type BackupState, createBackupService, readBackupState, scheduleOf } from './backup.service'
