/**
 * TypeScript types of an OpenAPI document, written by openapi-typescript (its CLI's own
 * `openapiTS` and `astToString`). openapi-typescript builds them with TypeScript 5's compiler
 * API (its peer dependency); this project's TypeScript is 7, the native compiler without that
 * API. So the generator runs in a process of its own, from a folder whose node_modules links
 * `typescript` to `typescript5` (an npm alias of typescript@5) and `openapi-typescript` to the
 * installed one, with symlinks kept as they are (--preserve-symlinks).
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')
const DIR = join(ROOT, 'test-artifacts/openapi-gen')

const GENERATOR = `import openapiTS, { astToString } from 'openapi-typescript'
const document = JSON.parse(await Bun.file(process.argv[2]).text())
await Bun.write(process.argv[3], astToString(await openapiTS(document)))
`

export async function writeOpenApiTypes(document: unknown, out: string): Promise<void> {
  mkdirSync(join(DIR, 'node_modules'), { recursive: true })
  for (const [name, target] of [
    ['openapi-typescript', 'openapi-typescript'],
    ['typescript', 'typescript5'],
  ] as const) {
    const link = join(DIR, 'node_modules', name)
    if (!existsSync(link)) symlinkSync(join(ROOT, 'node_modules', target), link)
  }
  writeFileSync(join(DIR, 'generate.mjs'), GENERATOR)
  const input = join(DIR, 'openapi.json')
  writeFileSync(input, JSON.stringify(document))
  const run = Bun.spawn([process.execPath, '--preserve-symlinks', join(DIR, 'generate.mjs'), input, out], { stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()])
  if ((await run.exited) !== 0) throw new Error(`openapi-typescript failed:\n${stdout}${stderr}`)
}
