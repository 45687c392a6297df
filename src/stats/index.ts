/** Statistics: the click-event vocabulary, click recording and batch writing (worker), rollups, GET /statistics. Other modules import this file only. */
export type { Browser, Device, Os } from './click-event'
export { type ClickRecorder, createClickRecorder, createPgClickRecorder, type RecorderHealth, type RecorderOptions } from './click-recorder'
export { createPgEventWriter, type PgEventWriterOptions } from './click-writer.pg'
export type { WriterHealth } from './click-writer.supervisor'
export { statsRoutes } from './stats.routes'
export { createStatsService, type StatsService } from './stats.service'
export { createStatsStore, type StatsStorePort } from './stats.store'
export { createPgStatsStore } from './stats.store.pg'
