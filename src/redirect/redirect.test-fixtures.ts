/** The redirect handler as the server wires it, over a harness's deps, for tests and benchmarks (no files, no hosted pages). */
import type { SqliteDeps } from '../deps'
import { createRedirectHandler, type RedirectDeps, type RedirectHandler } from './redirect.handler'

export function redirectHandlerFor(deps: SqliteDeps, opts: { storedClicks?: (seq: number) => number } = {}): RedirectHandler {
  return createRedirectHandler(handlerDeps({ deps }, opts))
}

/** What the handler is given over a harness's deps. */
export function handlerDeps({ deps }: { deps: SqliteDeps }, opts: { storedClicks?: (seq: number) => number } = {}): RedirectDeps {
  return {
    settings: deps.settings,
    findLiveRow: deps.links.findLiveRow,
    domainOf: (host) => deps.domains.lookup(host),
    storedClicks: opts.storedClicks ?? (() => 0),
    recorder: deps.recorder,
    geo: deps.geo,
    passwords: deps.passwords,
    renderHosted: () => new Response('hosted'),
    serveFile: () => null,
  }
}
