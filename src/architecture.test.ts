/**
 * The module rules, checked over the import graph of src/ (the CI step that keeps them):
 * - a folder of src/ is a module; other modules reach it only through its door, index.ts;
 * - no cycle between modules;
 * - shared/ imports no module;
 * - no module imports the composition root (src/*.ts: main, app, server, deps), which
 *   imports them.
 * Tests and test fixtures may reach into other modules for fixtures: they are not part of
 * the graph. `types/` holds ambient declarations only.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const SRC = import.meta.dir

/** Relative import specifiers of a TypeScript source: static and dynamic imports, re-exports. */
export function importsOf(source: string): string[] {
  const specs: string[] = []
  for (const m of source.matchAll(
    /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\s*\(\s*['"](\.[^'"]+)['"]\s*\)|^import\s+['"](\.[^'"]+)['"]/gm,
  ))
    specs.push((m[1] ?? m[2] ?? m[3])!)
  return specs
}

/** Rule violations in a tree given as path (relative to src, e.g. `links/links.store.ts`) → source. */
export function moduleViolations(files: Map<string, string>): string[] {
  const moduleOf = (path: string) => (path.includes('/') ? path.split('/')[0]! : null)
  const resolveSpec = (from: string, spec: string): string => {
    const base = normalize(join(dirname(from), spec))
    for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) if (files.has(candidate)) return candidate
    return base
  }
  const violations: string[] = []
  const edges = new Map<string, Set<string>>()
  for (const [path, source] of files) {
    if (/\.test(-fixtures)?\.ts$|\.d\.ts$/.test(path)) continue
    const from = moduleOf(path)
    if (from === null) continue
    for (const spec of importsOf(source)) {
      const target = resolveSpec(path, spec)
      if (target.startsWith('..')) continue // outside src (package.json, web assets)
      const to = moduleOf(target)
      if (to === from) continue
      if (to === null) {
        violations.push(`${path}: imports the composition root (${target})`)
        continue
      }
      if (to === 'types') continue
      if (from === 'shared') violations.push(`${path}: shared/ imports the module ${to}`)
      if (target !== `${to}/index.ts`) violations.push(`${path}: deep import of ${target} (import '${relative(dirname(path), to) || '.'}' instead)`)
      if (!edges.has(from)) edges.set(from, new Set())
      edges.get(from)!.add(to)
    }
  }
  // Cycles: a depth-first search over modules reports each back edge's cycle once.
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (m: string) => {
    state.set(m, 'open')
    stack.push(m)
    for (const next of [...(edges.get(m) ?? [])].sort()) {
      if (state.get(next) === 'open') violations.push(`module cycle: ${[...stack.slice(stack.indexOf(next)), next].join(' → ')}`)
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(m, 'done')
  }
  for (const m of [...edges.keys()].sort()) if (!state.has(m)) visit(m)
  return violations
}

function sourceTree(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
    const full = join(entry.parentPath, entry.name)
    files.set(relative(dir, full), readFileSync(full, 'utf8'))
  }
  return files
}

describe('module boundaries', () => {
  test('src/ keeps them: doors only, no cycles, shared imports no module, no module imports the root', () => {
    expect(moduleViolations(sourceTree(SRC))).toEqual([])
  })

  test('every module has a door', () => {
    const modules = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== 'types')
      .map((e) => e.name)
    expect(modules.filter((m) => !sourceTree(join(SRC, m)).has('index.ts'))).toEqual([])
  })

  test('the check fails on each kind of violation', () => {
    const tree = new Map([
      ['links/index.ts', "export { createLinkStore } from './links.store'"],
      ['links/links.store.ts', "import { LruCache } from '../shared'\nimport type { Deps } from '../deps'"],
      ['links/links.service.ts', "import { statsOf } from '../stats/stats.service'"],
      ['stats/index.ts', "export { statsOf } from './stats.service'"],
      ['stats/stats.service.ts', "import { createLinkStore } from '../links'"],
      ['shared/index.ts', "export { LruCache } from './lru'"],
      ['shared/lru.ts', "import type { Caller } from '../auth'"],
      ['auth/index.ts', 'export type Caller = { id: string }'],
      ['deps.ts', "import { createLinkStore } from './links'"],
      ['links/links.test.ts', "import { statsOf } from '../stats/stats.service'"],
    ])
    expect(moduleViolations(tree).sort()).toEqual(
      [
        'links/links.store.ts: imports the composition root (deps.ts)',
        "links/links.service.ts: deep import of stats/stats.service.ts (import '../stats' instead)",
        'shared/lru.ts: shared/ imports the module auth',
        'module cycle: links → stats → links',
      ].sort(),
    )
  })
})
