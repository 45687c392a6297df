/**
 * The OpenAPI document passes Redocly's recommended rules (`@redocly/cli lint`, run here
 * under Bun on the document the API serves) with one error left: the seed's own
 * `/links/{type}` beside `/links/{id}` (identical paths but for the parameter's name), which
 * a client of the seed depends on. Warnings are not failures.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHarness } from '../../test/helpers/in-process'

const CLI = join(import.meta.dir, '../../node_modules/@redocly/cli/bin/cli.js')

test("Redocly's recommended rules: no error but the seed's /links/{type} beside /links/{id}", async () => {
  const h = createHarness()
  const served = await h.call('GET', '/openapi.json', { key: null })
  expect(served.status).toBe(200)
  const file = join(mkdtempSync(join(tmpdir(), 'openapi-lint-')), 'openapi.json')
  writeFileSync(file, JSON.stringify(served.body))
  const lint = Bun.spawn([process.execPath, CLI, 'lint', file, '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err] = await Promise.all([new Response(lint.stdout).text(), new Response(lint.stderr).text()])
  await lint.exited
  let report: { problems: { ruleId: string; severity: string; message: string }[] }
  try {
    report = JSON.parse(out)
  } catch {
    throw new Error(`redocly gave no report:\n${out}\n${err}`)
  }
  const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`)
  expect(errors).toEqual(['no-identical-paths: The path already exists which differs only by path parameter name(s): `/links/{type}` and `/links/{id}`.'])
})
