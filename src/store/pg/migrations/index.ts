import { schema } from './0001_schema'
import { rollupStatistics } from './0002_rollup_statistics'
import { filesUploadOrder } from './0003_files_upload_order'
import { rateWindowLength } from './0004_rate_window_length'
import { imports } from './0005_imports'
import { qrBatches } from './0006_qr_batches'
import { eventsWebhooks } from './0007_events_webhooks'
import { linkHealth } from './0008_link_health'
import { compactClickEvents } from './0009_compact_click_events'
import { linkClicks } from './0010_link_clicks'
import { pairRollups } from './0011_pair_rollups'
import { abTests } from './0012_ab_tests'
import { conversions } from './0013_conversions'
import { conversionVariants } from './0014_conversion_variants'
import { clickEventsLoadVariant } from './0015_click_events_load_variant'
import { dropCountryIndex } from './0016_drop_country_index'

/** A PostgreSQL migration: statements run as one script inside its own transaction. */
export interface PgMigration {
  id: number
  name: string
  sql: string
}

/** Ordered by id; never edit a migration that has shipped, add a new one. */
export const pgMigrations: PgMigration[] = [
  schema,
  rollupStatistics,
  filesUploadOrder,
  rateWindowLength,
  imports,
  qrBatches,
  eventsWebhooks,
  linkHealth,
  compactClickEvents,
  linkClicks,
  pairRollups,
  abTests,
  conversions,
  conversionVariants,
  clickEventsLoadVariant,
  dropCountryIndex,
]
