/**
 * A/B tests in the link editor: the test's fields (variants whose percentages must sum to 100,
 * the end, the goal) and, for a saved link under test, its results (GET /links/{id}/test). The
 * limits, goals, statuses and the answer's shape are the server's (src/links/links.ab.*).
 */
import type { Static } from '@sinclair/typebox'
import type { LinkTestResult } from '../../../../src/links/links.ab.schema'
import {
  TEST_GOALS,
  TEST_PERCENTAGE_MAX,
  TEST_PERCENTAGE_MIN,
  TEST_SIGNIFICANCE,
  TEST_VARIANTS_MAX,
  TEST_VARIANTS_MIN,
  type TestGoal,
  type TestStatus,
} from '../../../../src/links/links.ab.values'
import { errorText, get } from '../../api'
import { Button, useResource } from '../../ui'
import { Check, GroupError, Select, TextInput } from './fields'
import { type OptionsForm, percentTotal, startingVariants, type TestVariantForm } from './options-model'

type TestResult = Static<typeof LinkTestResult>

const GOAL_LABELS: Record<TestGoal, string> = { leads: 'Leads (sign-ups)', sales: 'Sales' }
const STATUS_LABELS: Record<TestStatus, string> = { running: 'Running', completed: 'Winner found', inconclusive: 'Inconclusive' }

/** The editor's conversions section: tracking, and the A/B test (switching it on turns tracking on: a test counts conversions). */
export function AbTestFields({ o, set, url }: { o: OptionsForm; set: (patch: Partial<OptionsForm>) => void; url: string | null }) {
  const change = (patch: Partial<OptionsForm>) => set({ ...patch, testChanged: true })
  const setVariant = (i: number, patch: Partial<TestVariantForm>) => change({ testVariants: o.testVariants.map((v, j) => (j === i ? { ...v, ...patch } : v)) })
  const total = percentTotal(o.testVariants)
  return (
    <>
      <Check
        label="Track conversions"
        checked={o.trackConversion || o.abTest}
        onValue={(trackConversion) => set({ trackConversion })}
        hint="Each visit carries a click id to your site as the sl_id query parameter; your server reports sign-ups and sales with it (POST /track/lead, /track/sale), and statistics show leads, sales and revenue."
      />
      <Check
        label="Split visitors between destinations (A/B test)"
        checked={o.abTest}
        onValue={(abTest) =>
          change({ abTest, trackConversion: o.trackConversion || abTest, testVariants: abTest && !o.abTest ? startingVariants(url ?? '') : o.testVariants })
        }
      />
      {o.abTest ? (
        <fieldset class="le-ab" aria-label="A/B test">
          {o.testVariants.map((v, i) => (
            <div class="le-row le-ab-variant" key={i}>
              <TextInput
                label={`Variant ${String.fromCharCode(65 + i)} URL`}
                path={`linkOptions.testVariants.${i}.url`}
                type="url"
                value={v.url}
                onValue={(u) => setVariant(i, { url: u })}
                placeholder="https://example.com/landing-b"
              />
              <TextInput
                label="Share (%)"
                path={`linkOptions.testVariants.${i}.percentage`}
                type="number"
                step="1"
                value={v.percentage}
                onValue={(percentage) => setVariant(i, { percentage })}
              />
              {o.testVariants.length > TEST_VARIANTS_MIN ? (
                <Button kind="ghost" type="button" onClick={() => change({ testVariants: o.testVariants.filter((_, j) => j !== i) })}>
                  Remove
                </Button>
              ) : null}
            </div>
          ))}
          <p class={total === 100 ? 'hint' : 'hint le-ab-total-bad'} role={total === 100 ? undefined : 'alert'} data-testid="ab-total">
            {total === null ? 'Shares are whole numbers.' : total === 100 ? 'Total: 100 %' : `Total: ${total} %, the shares must add up to 100 %.`} Each share
            is {TEST_PERCENTAGE_MIN}-{TEST_PERCENTAGE_MAX} %.
          </p>
          <GroupError path="linkOptions.testVariants" />
          {o.testVariants.length < TEST_VARIANTS_MAX ? (
            <Button type="button" onClick={() => change({ testVariants: [...o.testVariants, { url: '', percentage: '' }] })}>
              Add a variant
            </Button>
          ) : null}
          <div class="le-row">
            <TextInput
              label="Test ends"
              path="linkOptions.testCompletedAt"
              type="datetime-local"
              value={o.testCompletedAt}
              onValue={(testCompletedAt) => change({ testCompletedAt })}
              hint="Then the best variant wins if the difference is significant (p < 0.05), else the link keeps its URL."
            />
            <Select
              label="Goal"
              path="linkOptions.testGoal"
              value={o.testGoal}
              onValue={(testGoal) => change({ testGoal })}
              options={TEST_GOALS.map((g) => ({ value: g, label: GOAL_LABELS[g] }))}
            />
          </div>
        </fieldset>
      ) : null}
    </>
  )
}

const percent = (x: number) => `${(x * 100).toFixed(1)} %`

/** The results of a saved link's test: per variant visits, conversions and rate; the p-value and the verdict. */
export function AbTestPanel({ linkId, version }: { linkId: string; version: string }) {
  const result = useResource((signal) => get<TestResult>(`/links/${encodeURIComponent(linkId)}/test`, undefined, signal), [linkId, version])
  const r = result.data
  return (
    <section class="card le-ab-results" aria-label="A/B test results">
      <h2>
        A/B test {r ? <span class={r.status === 'completed' ? 'badge badge-ok' : 'badge'}>{STATUS_LABELS[r.status]}</span> : null}
        <Button kind="ghost" type="button" onClick={result.reload} busy={result.loading}>
          Refresh
        </Button>
      </h2>
      {result.error ? <p class="error">{errorText(result.error)}</p> : null}
      {r ? (
        <>
          <p class="muted" data-testid="ab-verdict">
            {verdictText(r)} Goal: {GOAL_LABELS[r.goal].toLowerCase()}.
          </p>
          <table class="le-ab-table">
            <caption class="visually-hidden">Visits and conversions per variant</caption>
            <thead>
              <tr>
                <th scope="col">Variant</th>
                <th scope="col">Share</th>
                <th scope="col">Visits</th>
                <th scope="col">Leads</th>
                <th scope="col">Sales</th>
                <th scope="col">Conversion rate</th>
              </tr>
            </thead>
            <tbody>
              {r.variants.map((v, i) => (
                <tr key={v.url} class={r.winner === i ? 'le-ab-winner' : undefined}>
                  <th scope="row" class="mono">
                    {String.fromCharCode(65 + i)} · {v.url}
                    {r.winner === i ? ' (winner)' : ''}
                  </th>
                  <td>{v.percentage} %</td>
                  <td>{v.clicks}</td>
                  <td>{v.leads}</td>
                  <td>{v.sales}</td>
                  <td>{percent(v.conversionRate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  )
}

function verdictText(r: TestResult): string {
  const p = r.pValue === null ? 'no p-value yet (a variant has no visits)' : `p-value ${r.pValue < 0.0001 ? '< 0.0001' : r.pValue.toFixed(4)}`
  const ends = new Date(r.completedAt).toLocaleString()
  if (r.status === 'running') return `Runs until ${ends}; so far ${p} (significant below ${TEST_SIGNIFICANCE}).`
  if (r.status === 'completed') return `Ended ${ends}: variant ${String.fromCharCode(65 + r.winner!)} won (${p}) and is now the link's URL.`
  return `Ended ${ends} without a significant difference (${p}); the link kept its URL.`
}
