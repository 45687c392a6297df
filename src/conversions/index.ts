/** Conversions: POST /track/lead and /track/sale, their stores (SQLite, PostgreSQL) and records. Other modules import this file only. */
export { conversionRoutes } from './conversions.routes'
export { LeadRecord, PAYMENT_PROCESSORS, SaleRecord, TrackLeadBody, TrackSaleBody } from './conversions.schema'
export { type ConversionService, createConversionService } from './conversions.service'
export { type ConversionStoreAsync, createConversionStore } from './conversions.store'
export { createPgConversionStore } from './conversions.store.pg'
