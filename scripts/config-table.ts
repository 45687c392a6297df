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
      // A table inside the section ([backup.s3]): one row per key of it.
      const entries: [string, any][] = prop.type === 'object' ? Object.entries(prop.properties).map(([k, p]) => [`${key}.${k}`, p]) : [[key, prop]]
      for (const [path, p] of entries) {
        const env = `SHORTLINK_${section.toUpperCase()}_${path.replace('.', '_').toUpperCase()}`
        const rule = p.anyOf ? ` One of ${p.anyOf.map((a: any) => `\`${a.const}\``).join(', ')}.` : ''
        rows.push(`| \`${section}.${path}\` | \`${env}\` | \`${JSON.stringify(p.default)}\` | ${p.description}${rule} |`)
      }
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
