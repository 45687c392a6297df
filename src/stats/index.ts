/** Statistics: the click-event vocabulary, click recording and batch writing (worker), rollups, GET /statistics. Other modules import this file only. */
export { type Browser, type Device, EVENT_STRINGS, type Os, trackedClicksOf } from './click-event'
export { clickTimeOf, newClickId } from './click-id'
export {
  type ClickRecorder,
  createClickRecorder,
  createEventsHandle,
  createPgClickRecorder,
  type EventsHandle,
  eventsPathOf,
  type RecorderHealth,
  type RecorderOptions,
} from './click-recorder'
export { createPgEventWriter, type PgEventWriterOptions } from './click-writer.pg'
export type { WriterHealth } from './click-writer.supervisor'
export { DUCKDB_VERSION } from './events.duckdb'
export { inspectEventsStore, openEventsCopySource, restoreEventsStore } from './events.engine'
export { createEventsExporter, createPgEventsExporter } from './events.export'
export { statsRoutes } from './stats.routes'
export { createStatsService, type StatsService } from './stats.service'
export { createStatsStore, type StatsStorePort } from './stats.store'
export { createEventsStatsStore } from './stats.store.events'
export { createPgStatsStore } from './stats.store.pg'
