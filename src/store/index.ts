/** The embedded store: opening the SQLite file (pragmas), migrations, the data-dir lock. Other modules import this file only. */
export { connectStore, type Db, openStore, storePath } from './db'
export { DataDirLockedError, lockDataDir } from './lock'
