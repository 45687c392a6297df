import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readmeWithTable } from '../../scripts/config-table'

test('the README config table is the one generated from the schema (run: bun scripts/config-table.ts --write)', () => {
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8')
  expect(readme).toBe(readmeWithTable(readme))
})
