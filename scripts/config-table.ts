/**
 * Prints the README's configuration table from the config schema, or with --write
 * replaces it between the markers in README.md.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { Config } from '../src/config/config.schema'

export function configTable(): string {
  const rows = ['| key | env | default | description |', '|---|---|---|---|']
  for (const [section, schema] of Object.entries(Config.properties)) {
    for (const [key, prop] of Object.entries((schema as any).properties) as [string, any][]) {
      const env = `SHORTLINK_${section.toUpperCase()}_${key.toUpperCase()}`
      const rule = prop.anyOf ? ` One of ${prop.anyOf.map((a: any) => `\`${a.const}\``).join(', ')}.` : ''
      rows.push(`| \`${section}.${key}\` | \`${env}\` | \`${JSON.stringify(prop.default)}\` | ${prop.description}${rule} |`)
    }
  }
  return rows.join('\n')
}

const START = '<!-- config-table:start -->'
const END = '<!-- config-table:end -->'

export function readmeWithTable(readme: string): string {
  const a = readme.indexOf(START)
  const b = readme.indexOf(END)
  if (a < 0 || b < 0) throw new Error('README.md lacks the config-table markers')
  return `${readme.slice(0, a + START.length)}\n${configTable()}\n${readme.slice(b)}`
}

if (import.meta.main) {
  if (process.argv.includes('--write')) {
    writeFileSync('README.md', readmeWithTable(readFileSync('README.md', 'utf8')))
    console.log('README.md config table updated')
  } else console.log(configTable())
}
