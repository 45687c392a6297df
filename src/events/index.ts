/** The event outbox: event types, and appending events inside the transaction of their change (links, domains, click batches), on SQLite and PostgreSQL. Light on purpose: the click writer's worker imports it. Other modules import this file only. */
export { appendClickEvents } from './click-events'
export { appendClickEventsPg } from './click-events.pg'
export type { VisitRow } from './click-events.shared'
export { appendEvents, eventsAppended, type NewEvent, onEventsAppended } from './events.outbox'
export { appendEventsPg } from './events.outbox.pg'
export { EVENT_CATALOG, EVENT_TYPES, type EventType, isLinkEvent } from './events.types'
