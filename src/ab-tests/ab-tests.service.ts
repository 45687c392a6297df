/**
 * A/B tests (contract: "A/B tests"): the results of a link's test, and the verdict at its end,
 * taken by one node (the lease holder on PostgreSQL; the only node on SQLite) and stored once
 * per test whatever happens (the verdict's key). A winner's URL becomes the link's (through the
 * links service: `link.updated` comes from its write); `link.test_completed` follows either way,
 * appended by the store in the verdict's own transaction (`eventsOf`), so no crash loses it.
 * The split itself is the redirect's (resolve.ts `testVariant`): it stops at `testCompletedAt`.
 */
import type { Static } from '@sinclair/typebox'
import type { Caller } from '../auth'
import type { LinkRecord, LinkRow, LinkTestResult, TestGoal } from '../links'
import { storedOptionsOf } from '../links'
import { type Logger, notFound } from '../shared'
import { type AbTestStorePort, emptyTally, type VariantTally, type VerdictEventsOf, type VerdictRow } from './ab-tests.store'
import { conversionRate, verdictOf } from './ab-tests.verdict'

export type TestResult = Static<typeof LinkTestResult>

/** What the service needs of links and webhooks (wired in deps.ts). */
export interface AbTestDeps {
  store: AbTestStorePort
  links: {
    get(caller: Caller, id: string): Promise<LinkRecord>
    update(caller: Caller, id: string, body: { data: unknown }): Promise<LinkRecord>
    findLiveRow(domain: string, key: string): LinkRow | null | Promise<LinkRow | null>
  }
  /**
   * The events of a verdict (`link.test_completed`): the link as the verdict left it and the
   * test's results. The store appends them in the transaction that stores the verdict.
   */
  eventsOf?: (completed: CompletedTest) => ReturnType<VerdictEventsOf>
  /** Runs `work` while this node leads (PostgreSQL: a lease); absent: this node always does. */
  lead?: (work: (signal: AbortSignal) => Promise<void>, stop: AbortSignal) => Promise<void>
  log: Logger
  now?: () => number
  /** How often the node looks for tests whose end has come (the contract allows 5 seconds). */
  everyMs?: number
}

/** A judged test: its link after the verdict (a winner promoted) and its results. */
export interface CompletedTest {
  link: LinkRecord
  test: TestResult
}

/** Tests judged per look; more wait for the next one. */
const DUE_PER_LOOK = 100

export function createAbTests(deps: AbTestDeps) {
  const { store, log } = deps
  const now = deps.now ?? Date.now
  const everyMs = deps.everyMs ?? 1000
  const stopping = new AbortController()
  let running: Promise<void> | null = null

  /** The test of a live link row, as the options hold it; null without one. */
  function testOf(row: LinkRow) {
    const o = storedOptionsOf(row)
    if (!o.testVariants || !o.testCompletedAt) return null
    return { variants: o.testVariants, completedAt: o.testCompletedAt, goal: (o.testGoal ?? 'leads') as TestGoal, startedAt: o.testStartedAt ?? 0 }
  }

  function resultOf(test: NonNullable<ReturnType<typeof testOf>>, tallies: VariantTally[], verdict: VerdictRow | null): TestResult {
    const counts = tallies.map((t) => ({ visits: t.clicks, converted: test.goal === 'sales' ? t.saleVisits : t.leadVisits }))
    const live = verdict ? null : verdictOf(counts)
    return {
      status: verdict ? verdict.status : 'running',
      goal: test.goal,
      completedAt: test.completedAt,
      winner: verdict ? verdict.winner : null,
      pValue: verdict ? verdict.pValue : live!.pValue,
      variants: test.variants.map((v, i) => ({
        url: v.url,
        percentage: v.percentage,
        clicks: tallies[i]!.clicks,
        leads: tallies[i]!.leads,
        sales: tallies[i]!.sales,
        conversionRate: conversionRate(counts[i]!),
      })),
    }
  }

  async function talliesOf(seq: number, startedAt: number, n: number): Promise<VariantTally[]> {
    const byVariant = await store.tallies(seq, startedAt)
    return Array.from({ length: n }, (_, i) => byVariant.get(i) ?? emptyTally())
  }

  /** GET /links/{id}/test: a judged test's counts are those of its verdict; a running one's are read now. */
  async function results(caller: Caller, id: string): Promise<TestResult> {
    const record = await deps.links.get(caller, id)
    const row = await deps.links.findLiveRow(record.domain, record.key)
    const test = row && testOf(row)
    if (!row || !test) throw notFound(`link ${id} has no A/B test`)
    const verdict = await store.verdictOf(row.seq, test.startedAt)
    return resultOf(test, verdict ? verdict.variants : await talliesOf(row.seq, test.startedAt, test.variants.length), verdict)
  }

  /** Judges one test whose end has come: stores its verdict once, promotes a winner, announces it. */
  async function judge(seq: number, id: string, startedAt: number): Promise<void> {
    const owner: Caller = { userId: '', role: 'admin', keyId: null }
    const record = await deps.links.get(owner, id).catch(() => null)
    const row = record && (await deps.links.findLiveRow(record.domain, record.key))
    const test = row && testOf(row)
    // Changed since it was found due (its variants set again, or removed): the next look sees it as it is.
    if (!record || !row || !test || test.startedAt !== startedAt || Date.parse(test.completedAt) > now()) return
    const tallies = await talliesOf(seq, startedAt, test.variants.length)
    const { winner, pValue } = verdictOf(tallies.map((t) => ({ visits: t.clicks, converted: test.goal === 'sales' ? t.saleVisits : t.leadVisits })))
    const verdict: VerdictRow = {
      linkSeq: seq,
      startedAt,
      status: winner === null ? 'inconclusive' : 'completed',
      winner,
      pValue,
      variants: tallies,
      judgedAt: now(),
    }
    // The winner is promoted first (its link.updated in the links store's transaction), then the verdict is
    // stored under its unique key with its link.test_completed in one transaction: a crash in between leaves
    // the test due, judged again at the next look; a verdict stored already (another node's) adds no event.
    let link = record
    if (winner !== null) {
      const data = { ...(record.data as Record<string, unknown>), url: test.variants[winner]!.url }
      link = await deps.links.update(owner, id, { data })
    }
    const completed: CompletedTest = { link, test: resultOf(test, tallies, verdict) }
    const eventsOf = deps.eventsOf
    if (!(await store.saveVerdict(verdict, eventsOf && (() => eventsOf(completed))))) return
    log.info('A/B test judged', { linkId: id, status: verdict.status, winner, pValue })
  }

  /** Judges the tests whose end has come, until stopped. */
  async function work(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for (const t of await store.dueTests(now(), DUE_PER_LOOK)) {
          if (signal.aborted) break
          await judge(t.seq, t.id, t.startedAt).catch((e) =>
            log.error('A/B test: the verdict failed; tried again at the next look', { linkId: t.id, error: String(e) }),
          )
        }
      } catch (e) {
        if (!signal.aborted) log.error('A/B test: could not read the tests due', { error: String(e) })
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, everyMs)
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            resolve()
          },
          { once: true },
        )
      })
    }
  }

  return {
    results,
    /** Starts looking for tests to judge (with the server). */
    start(): void {
      running ??= (deps.lead ? deps.lead(work, stopping.signal) : work(stopping.signal)).catch((e) =>
        log.error('A/B test: the verdicts stopped', { error: String(e) }),
      )
    },
    async stop(): Promise<void> {
      stopping.abort()
      await running
    },
    /** Tests: one look now. */
    judgeDue: async () => {
      for (const t of await store.dueTests(now(), DUE_PER_LOOK)) await judge(t.seq, t.id, t.startedAt)
    },
  }
}
export type AbTests = ReturnType<typeof createAbTests>
