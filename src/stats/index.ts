/** Statistics: the click-event vocabulary, click recording and batch writing (worker), rollups, GET /statistics. Other modules import this file only. */
export type { Browser, Device, Os } from './click-event'
export { type ClickRecorder, createClickRecorder } from './click-recorder'
export { statsRoutes } from './stats.routes'
export { createStatsService, type StatsService } from './stats.service'
export { createStatsStore } from './stats.store'
