/**
 * A Prometheus registry written once for our needs (text exposition format 0.0.4). prom-client
 * 15.1.3 runs on Bun 1.4.5 and under `bun build --compile`, but its observe() and labelled
 * inc() build a label-hash string and objects on every call (160-270 ns each, measured): too
 * much for the redirect path. Here a metric's children are made once with their label values
 * and hold plain numbers (histograms: a Float64Array), so recording is a few arithmetic
 * operations with no allocation and no lookup. Label sets stay bounded because children are
 * made by code (a route template, a result word), never from request data.
 *
 * Defining a metric is one line from any module; defining the same name again with the same
 * type and labels answers the same metric, so a module may be loaded twice (tests) safely.
 */

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

type Kind = 'counter' | 'gauge' | 'histogram'

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
const escapeValue = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')

/** A sample value as Prometheus reads it. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  if (v === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(v)
}

function labelText(names: readonly string[], values: readonly string[], extra = ''): string {
  if (names.length === 0 && !extra) return ''
  const parts = names.map((n, i) => `${n}="${escapeValue(values[i]!)}"`)
  if (extra) parts.push(extra)
  return `{${parts.join(',')}}`
}

abstract class Family<C> {
  /** Children by their label values joined with NUL (made once per label set). */
  protected readonly children = new Map<string, { values: readonly string[]; child: C }>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
    readonly labelNames: readonly string[],
  ) {}

  protected abstract make(): C

  /** Every label of its samples (a status counter adds `status`). */
  get declaredLabels(): readonly string[] {
    return this.labelNames
  }

  /** The child of these label values (one per label name, in order); keep it and use it on hot paths. */
  labels(...values: string[]): C {
    if (values.length !== this.labelNames.length)
      throw new Error(`${this.name}: ${this.labelNames.length} label values expected (${this.labelNames.join(', ')}), got ${values.length}`)
    const key = values.join('\0')
    let entry = this.children.get(key)
    if (!entry) {
      entry = { values: [...values], child: this.make() }
      this.children.set(key, entry)
    }
    return entry.child
  }

  /** Drops every child (a gauge re-filled at each scrape: certificate expiry of the current domains). */
  reset(): void {
    this.children.clear()
  }

  write(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.kind}`)
    for (const { values, child } of this.children.values()) this.writeChild(out, values, child)
  }

  protected abstract writeChild(out: string[], values: readonly string[], child: C): void
}

export class CounterChild {
  value = 0
  inc(n = 1): void {
    this.value += n
  }
}

export class GaugeChild extends CounterChild {
  set(v: number): void {
    this.value = v
  }
}

/** A family of single values (counters, gauges): one sample per child. */
abstract class ScalarFamily<C extends CounterChild> extends Family<C> {
  /** The child of a family without labels. */
  protected readonly unlabelled: C | null
  constructor(name: string, help: string, kind: Kind, labelNames: readonly string[]) {
    super(name, help, kind, labelNames)
    this.unlabelled = labelNames.length === 0 ? this.labels() : null
  }
  protected writeChild(out: string[], values: readonly string[], c: C) {
    out.push(`${this.name}${labelText(this.labelNames, values)} ${formatValue(c.value)}`)
  }
}

export class Counter extends ScalarFamily<CounterChild> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'counter', labelNames)
  }
  protected make() {
    return new CounterChild()
  }
  /** A counter without labels. */
  inc(n = 1): void {
    this.unlabelled!.inc(n)
  }
}

export class Gauge extends ScalarFamily<GaugeChild> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'gauge', labelNames)
  }
  protected make() {
    return new GaugeChild()
  }
  set(v: number): void {
    this.unlabelled!.set(v)
  }
}

export class HistogramChild {
  /** counts[i]: observations ≤ bounds[i] and > bounds[i-1]; the last slot is above every bound. */
  readonly counts: Float64Array
  sum = 0
  constructor(readonly bounds: Float64Array) {
    this.counts = new Float64Array(bounds.length + 1)
  }
  observe(v: number): void {
    const b = this.bounds
    let i = 0
    while (i < b.length && v > b[i]!) i++
    this.counts[i]!++
    this.sum += v
  }
}

export class Histogram extends Family<HistogramChild> {
  readonly bounds: Float64Array
  private readonly unlabelled: HistogramChild | null
  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, 'histogram', labelNames)
    if (labelNames.includes('le')) throw new Error(`${name}: 'le' is reserved for histogram buckets`)
    const sorted = [...buckets].sort((a, b) => a - b)
    if (sorted.length === 0 || sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b === sorted[i - 1])))
      throw new Error(`${name}: buckets must be distinct finite numbers`)
    this.bounds = Float64Array.from(sorted)
    this.unlabelled = labelNames.length === 0 ? this.labels() : null
  }
  protected make() {
    return new HistogramChild(this.bounds)
  }
  observe(v: number): void {
    this.unlabelled!.observe(v)
  }
  protected writeChild(out: string[], values: readonly string[], h: HistogramChild) {
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += h.counts[i]!
      out.push(`${this.name}_bucket${labelText(this.labelNames, values, `le="${formatValue(this.bounds[i]!)}"`)} ${cumulative}`)
    }
    cumulative += h.counts[this.bounds.length]!
    out.push(`${this.name}_bucket${labelText(this.labelNames, values, 'le="+Inf"')} ${cumulative}`)
    out.push(`${this.name}_sum${labelText(this.labelNames, values)} ${formatValue(h.sum)}`)
    out.push(`${this.name}_count${labelText(this.labelNames, values)} ${cumulative}`)
  }
}

export class StatusCountsChild {
  /** Requests by HTTP status (100-599); index = status. */
  readonly counts = new Float64Array(600)
  inc(status: number): void {
    this.counts[status >= 100 && status < 600 ? status : 0]!++
  }
}

/**
 * A counter with a `status` label whose children are made by the other labels only: the status
 * indexes a typed array, so counting a response costs no string (the redirect path's counter).
 */
export class StatusCounter extends Family<StatusCountsChild> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'counter', labelNames)
  }
  override get declaredLabels(): readonly string[] {
    return [...this.labelNames, 'status']
  }
  protected make() {
    return new StatusCountsChild()
  }
  protected writeChild(out: string[], values: readonly string[], c: StatusCountsChild) {
    for (let s = 0; s < 600; s++) {
      const n = c.counts[s]!
      if (n > 0) out.push(`${this.name}${labelText(this.labelNames, values, `status="${s === 0 ? 'other' : s}"`)} ${n}`)
    }
  }
}

/** Runs before each scrape: sets gauges from live state (memory, the store's reachability, certificates). */
export type Collector = () => void | Promise<void>

export class Registry {
  private readonly families = new Map<string, Family<unknown>>()
  private readonly collectors = new Set<Collector>()

  constructor(private readonly prefix = 'shortlink_') {}

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.define(name, 'counter', labelNames, () => new Counter(name, help, labelNames)) as Counter
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.define(name, 'gauge', labelNames, () => new Gauge(name, help, labelNames)) as Gauge
  }

  histogram(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []): Histogram {
    return this.define(name, 'histogram', labelNames, () => new Histogram(name, help, labelNames, buckets)) as Histogram
  }

  /** A counter by the given labels and the response status (the status is the last label, added here). */
  statusCounter(name: string, help: string, labelNames: readonly string[] = []): StatusCounter {
    return this.define(name, 'counter', [...labelNames, 'status'], () => new StatusCounter(name, help, labelNames)) as StatusCounter
  }

  /** Adds a collector run before each scrape; returns its removal (a server that stops drops its own). */
  onCollect(fn: Collector): () => void {
    this.collectors.add(fn)
    return () => this.collectors.delete(fn)
  }

  /** The text exposition of every metric, after running the collectors (a failing one is skipped, its error reported). */
  async render(onCollectorError?: (e: unknown) => void): Promise<string> {
    await Promise.all(
      [...this.collectors].map(async (fn) => {
        try {
          await fn()
        } catch (e) {
          onCollectorError?.(e)
        }
      }),
    )
    const out: string[] = []
    for (const f of this.families.values()) f.write(out)
    out.push('')
    return out.join('\n')
  }

  private define(name: string, kind: Kind, labelNames: readonly string[], make: () => Family<unknown>): Family<unknown> {
    if (!NAME.test(name) || !name.startsWith(this.prefix)) throw new Error(`metric name '${name}' must match ${NAME} and start with '${this.prefix}'`)
    for (const l of labelNames) if (!LABEL.test(l) || l.startsWith('__')) throw new Error(`${name}: invalid label name '${l}'`)
    const existing = this.families.get(name)
    if (existing) {
      if (existing.kind !== kind || existing.declaredLabels.join(',') !== labelNames.join(','))
        throw new Error(`metric '${name}' is already defined as a ${existing.kind} with labels (${existing.declaredLabels.join(', ')})`)
      return existing
    }
    const family = make()
    this.families.set(name, family)
    return family
  }
}
