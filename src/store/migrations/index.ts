import { foundation } from './0001_foundation'
import { links } from './0002_links'
import { clicks } from './0003_clicks'
import { domains } from './0004_domains'
import { templates } from './0005_templates'
import { files } from './0006_files'
import { stats } from './0007_stats'
import { statsBusyLinks } from './0008_stats_busy_links'
import { usersKeys } from './0009_users_keys'
import { statsGroups } from './0010_stats_groups'
import { clickValues } from './0011_click_values'
import { sessions } from './0012_sessions'
import { imports } from './0013_imports'
import { qrBatches } from './0014_qr_batches'
import { eventsWebhooks } from './0015_events_webhooks'
import { linkHealth } from './0016_link_health'
import { abTests } from './0017_ab_tests'
import { conversions } from './0018_conversions'
import { conversionVariants } from './0019_conversion_variants'

export interface Migration {
  id: number
  name: string
  sql: string
}

/** Ordered by id; never edit a migration that has shipped, add a new one. */
export const migrations: Migration[] = [
  foundation,
  links,
  clicks,
  domains,
  templates,
  files,
  stats,
  statsBusyLinks,
  usersKeys,
  statsGroups,
  clickValues,
  sessions,
  imports,
  qrBatches,
  eventsWebhooks,
  linkHealth,
  abTests,
  conversions,
  conversionVariants,
]
