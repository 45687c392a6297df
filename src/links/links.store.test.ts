import { describe, expect, test } from 'bun:test'
import { seededRandom } from '../../test/helpers/random'
import { openStore } from '../store'
import { createLinkStore, type LinkFilter, type LinkSort } from './links.store'

/**
 * Searches have plans of their own (the FTS index drives them: few matches are collected in
 * one pass, many are counted, then paged in rowid order or by walking a sort index). Every
 * plan must give the page and total a plain reading of the rules gives.
 */
describe('search pages and totals', () => {
  const db = openStore(':memory:')
  const store = createLinkStore(db)
  const rnd = seededRandom(16)
  const USERS = ['usr_a', 'usr_b', 'usr_c']
  for (const u of USERS) db.query('INSERT INTO users (id, created_at) VALUES (?, 0)').run(u)
  const WORDS = ['summer', 'Sale', 'promo', 'menu']
  interface Expected {
    seq: number
    id: string
    user: string
    type: string
    domain: string
    text: string
    archived: number
    deleted: boolean
    clicks: number
    last: number | null
  }
  const links: Expected[] = []
  const setClicks = db.query('UPDATE links SET clicks = ?, last_clicked = ? WHERE seq = ?')
  db.transaction(() => {
    for (let i = 0; i < 12_000; i++) {
      // "summer" is in most links (more than a page-by-index plan takes), "menu" in few.
      const word = rnd() < 0.6 ? 'summer' : WORDS[1 + Math.floor(rnd() * 3)]!
      const user = USERS[Math.floor(rnd() ** 2 * 3)]!
      const type = rnd() < 0.7 ? 'link' : 'text'
      const domain = rnd() < 0.8 ? 'localhost' : 'go.example'
      const key = `k${i}`
      const dest = `https://shop${i % 50}.example.com/${word}/${i}`
      const archived = rnd() < 0.1 ? 1 : 0
      const id = `lnk_t${i}`
      const now = 1_000 + i
      const row = { id, user_id: user, domain, key, link_type: type, destination: dest, match_key: dest, data: '{}', options: '{}' }
      const text = `${key} ${dest}`
      const seq = store.createLink(
        { ...row, qr_options: null, password_hash: null, expires_at: null, archived, created_at: now, updated_at: now },
        [],
        text,
      )!.seq
      // Ties in clicks and never-clicked links, so the tie-breaks are checked too.
      const clicks = rnd() < 0.3 ? 0 : Math.floor(rnd() * 40)
      const last = clicks ? 5_000 + Math.floor(rnd() * 100) : null
      setClicks.run(clicks, last, seq)
      const deleted = rnd() < 0.05
      if (deleted) {
        store.softDeleteLinks([seq], now)
      }
      links.push({ seq, id, user, type, domain, text, archived, deleted, clicks, last })
    }
  })()

  function expected(f: LinkFilter, s: LinkSort): { ids: string[]; total: number } {
    const term = f.search!.toLowerCase()
    const matches = links.filter(
      (l) =>
        !l.deleted &&
        (f.includeArchived || l.archived === 0) &&
        (!f.userIds || f.userIds.includes(l.user)) &&
        (!f.linkType || l.type === f.linkType) &&
        (!f.domain || l.domain === f.domain) &&
        l.text.toLowerCase().includes(term),
    )
    const dir = s.sortOrder === 'asc' ? 1 : -1
    const key = (l: Expected): number[] => {
      if (s.sortBy === 'clicks') return [dir * l.clicks, dir * l.seq]
      if (s.sortBy === 'last_created_at') return s.sortOrder === 'desc' ? [-(l.last ?? -1), -l.seq] : [l.last === null ? 1 : 0, l.last ?? 0, l.seq]
      return [dir * l.seq]
    }
    const sorted = matches
      .map((l) => ({ l, k: key(l) }))
      .sort((a, b) => {
        for (let i = 0; i < a.k.length; i++) if (a.k[i] !== b.k[i]) return a.k[i]! - b.k[i]!
        return 0
      })
    return { ids: sorted.slice(s.offset, s.offset + s.limit).map((x) => x.l.id), total: matches.length }
  }

  const filters: Omit<LinkFilter, 'search'>[] = [
    {},
    { includeArchived: true },
    { userIds: ['usr_a'] },
    { userIds: ['usr_c'] },
    { userIds: ['usr_b', 'usr_c'], includeArchived: true },
    { linkType: 'text' },
    { userIds: ['usr_a'], linkType: 'link' },
    { domain: 'go.example' },
  ]
  const sorts: LinkSort[] = []
  for (const sortBy of ['created_at', 'clicks', 'last_created_at'] as const)
    for (const sortOrder of ['desc', 'asc'] as const)
      for (const [limit, offset] of [
        [20, 0],
        [7, 33],
        [100, 4990],
        [20, 20_000],
      ] as const)
        sorts.push({ sortBy, sortOrder, limit, offset })

  for (const search of ['summer', 'SALE', 'menu', 'shop7.example', 'nothing-here', 'k11'])
    test(`"${search}": every filter, sort and page`, () => {
      for (const f0 of filters) {
        const f = { ...f0, search }
        const first = expected(f, sorts[0]!)
        expect({ filter: f, count: store.count(f) }).toEqual({ filter: f, count: first.total })
        for (const s of sorts) {
          const got = store.list(f, s)
          expect({ filter: f, sort: s, ids: got.rows.map((r) => r.id), total: got.total }).toEqual({ filter: f, sort: s, ...expected(f, s) })
        }
      }
    })

  test('the common term takes the many-matches plans', () => {
    expect(store.count({ search: 'summer' })).toBeGreaterThan(5000)
    expect(store.count({ search: 'summer', userIds: ['usr_c'] })).toBeLessThan(5000)
  })
})
