/**
 * Prometheus metrics: the process's registry (`metrics`), one line to define a metric from any
 * module (`metrics.counter('shortlink_x_total', 'What it counts', ['result'])`), and the
 * listener of `[metrics] listen`. Other modules import this file only.
 */
import pkg from '../../package.json'
import { Registry } from './metrics.registry'

export { type MetricsListener, parseListen, startMetricsListener } from './metrics.listener'
export {
  type Collector,
  Counter,
  CounterChild,
  formatValue,
  Gauge,
  GaugeChild,
  Histogram,
  HistogramChild,
  Registry,
  StatusCounter,
  StatusCountsChild,
} from './metrics.registry'

/** The registry of this process: every module defines its metrics here, the listener renders it. */
export const metrics = new Registry('shortlink_')

/** Requests by route template (the API's, `redirect`, `dashboard`) and status. */
export const httpRequests = metrics.statusCounter('shortlink_http_requests_total', 'HTTP requests answered, by route template and status.', ['route'])

/** Seconds from a short-link request's arrival to its response (the redirect path). */
export const redirectDuration = metrics.histogram(
  'shortlink_redirect_duration_seconds',
  'Time to answer a request on a short domain (redirects, hosted pages, files), in seconds.',
  [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
)

/** Seconds to answer an API request (every route together). */
export const apiDuration = metrics.histogram(
  'shortlink_api_request_duration_seconds',
  'Time to answer an API request, in seconds.',
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
)

const residentMemory = metrics.gauge('shortlink_process_resident_memory_bytes', 'Resident set size of the process, in bytes.')
const heapUsed = metrics.gauge('shortlink_process_heap_used_bytes', 'JavaScript heap in use, in bytes.')
const heapTotal = metrics.gauge('shortlink_process_heap_total_bytes', 'JavaScript heap reserved, in bytes.')
const startTime = metrics.gauge('shortlink_process_start_time_seconds', 'When the process started, in seconds since the Unix epoch.')
const buildInfo = metrics.gauge('shortlink_build_info', 'Always 1; the labels say which build runs.', ['version', 'bun'])
startTime.set(Math.round((Date.now() - performance.now()) / 1000))
buildInfo.labels(pkg.version, Bun.version).set(1)
metrics.onCollect(() => {
  const m = process.memoryUsage()
  residentMemory.set(m.rss)
  heapUsed.set(m.heapUsed)
  heapTotal.set(m.heapTotal)
})
