import { foundation } from './0001_foundation'
import { links } from './0002_links'

export interface Migration {
  id: number
  name: string
  sql: string
}

/** Ordered by id; never edit a migration that has shipped, add a new one. */
export const migrations: Migration[] = [foundation, links]
