import { describe, expect, test } from 'bun:test'
import { createLogger } from '../shared'
import { parseListen, Registry, startMetricsListener } from '.'

describe('registry', () => {
  test('counters, gauges and a histogram in the text format, labels escaped', async () => {
    const r = new Registry('t_')
    const c = r.counter('t_orders_total', 'Orders by result.', ['result'])
    c.labels('issued').inc()
    c.labels('issued').inc(2)
    c.labels('fail "x"\n').inc()
    r.gauge('t_up', 'Up.\\ or down').set(1)
    const h = r.histogram('t_seconds', 'Latency.', [0.01, 0.1, 1])
    for (const v of [0.005, 0.01, 0.05, 0.5, 3]) h.observe(v)
    expect(await r.render()).toBe(
      [
        '# HELP t_orders_total Orders by result.',
        '# TYPE t_orders_total counter',
        't_orders_total{result="issued"} 3',
        't_orders_total{result="fail \\"x\\"\\n"} 1',
        '# HELP t_up Up.\\\\ or down',
        '# TYPE t_up gauge',
        't_up 1',
        '# HELP t_seconds Latency.',
        '# TYPE t_seconds histogram',
        't_seconds_bucket{le="0.01"} 2',
        't_seconds_bucket{le="0.1"} 3',
        't_seconds_bucket{le="1"} 4',
        't_seconds_bucket{le="+Inf"} 5',
        't_seconds_sum 3.565',
        't_seconds_count 5',
        '',
      ].join('\n'),
    )
  })

  test('a status counter counts by status without strings; unknown statuses fall into "other"', async () => {
    const r = new Registry('t_')
    const redirects = r.statusCounter('t_requests_total', 'Requests.', ['route']).labels('redirect')
    redirects.inc(302)
    redirects.inc(302)
    redirects.inc(404)
    redirects.inc(999)
    expect((await r.render()).split('\n').filter((l) => !l.startsWith('#') && l)).toEqual([
      't_requests_total{route="redirect",status="other"} 1',
      't_requests_total{route="redirect",status="302"} 2',
      't_requests_total{route="redirect",status="404"} 1',
    ])
  })

  test('defining a metric again answers the same one; a different shape or a bad name is refused', () => {
    const r = new Registry('t_')
    const a = r.counter('t_x_total', 'X.', ['result'])
    expect(r.counter('t_x_total', 'X.', ['result'])).toBe(a)
    expect(r.statusCounter('t_s_total', 'S.', ['route'])).toBe(r.statusCounter('t_s_total', 'S.', ['route']))
    expect(() => r.gauge('t_x_total', 'X.', ['result'])).toThrow(/already defined as a counter/)
    expect(() => r.counter('t_x_total', 'X.', ['other'])).toThrow(/already defined/)
    expect(() => r.counter('other_total', 'X.')).toThrow(/start with 't_'/)
    expect(() => r.counter('t_bad-name', 'X.')).toThrow(/must match/)
    expect(() => r.histogram('t_h', 'H.', [1], ['le'])).toThrow(/reserved/)
    expect(() => a.labels()).toThrow(/1 label values expected/)
  })

  test('collectors run before each scrape; a failing one is reported and the rest still render', async () => {
    const r = new Registry('t_')
    const g = r.gauge('t_reachable', 'Reachable.')
    let n = 0
    const remove = r.onCollect(() => g.set(++n))
    r.onCollect(() => {
      throw new Error('store down')
    })
    const errors: string[] = []
    expect(await r.render((e) => errors.push(String(e)))).toContain('t_reachable 1')
    expect(await r.render()).toContain('t_reachable 2')
    expect(errors).toEqual(['Error: store down'])
    remove()
    expect(await r.render()).toContain('t_reachable 2')
  })

  test('recording on a kept child allocates nothing', () => {
    const r = new Registry('t_')
    const h = r.histogram('t_alloc_seconds', 'A.', [0.001, 0.01, 0.1])
    const c = r.statusCounter('t_alloc_total', 'A.', ['route']).labels('redirect')
    const run = (n: number) => {
      for (let i = 0; i < n; i++) {
        h.observe(i % 7 === 0 ? 0.05 : 0.0005)
        c.inc(302)
      }
    }
    run(10_000)
    Bun.gc(true)
    const before = process.memoryUsage().heapUsed
    run(1_000_000)
    const grown = process.memoryUsage().heapUsed - before
    // A million observations that each allocated even one small object would grow the heap by tens of MB.
    expect(grown).toBeLessThan(1_000_000)
  })
})

describe('listener', () => {
  test('listen addresses', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ hostname: '127.0.0.1', port: 9464 })
    expect(parseListen('[::1]:9464')).toEqual({ hostname: '::1', port: 9464 })
    expect(parseListen(':9464')).toEqual({ hostname: '0.0.0.0', port: 9464 })
    expect(parseListen('localhost:9464')).toEqual({ hostname: 'localhost', port: 9464 })
    expect(parseListen('127.0.0.1:0')).toEqual({ hostname: '127.0.0.1', port: 0 })
    for (const bad of ['9464', '127.0.0.1', '127.0.0.1:70000', '::1:9464', 'a:b']) expect(parseListen(bad)).toBeNull()
  })

  test('serves /metrics only, as Prometheus text', async () => {
    const r = new Registry('t_')
    r.counter('t_hits_total', 'Hits.').inc(5)
    const l = startMetricsListener('127.0.0.1:0', r, createLogger(true))
    try {
      const res = await fetch(`http://127.0.0.1:${l.port}/metrics`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
      expect(await res.text()).toContain('t_hits_total 5')
      expect((await fetch(`http://127.0.0.1:${l.port}/`)).status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${l.port}/metrics`, { method: 'POST', body: 'x' })).status).toBe(405)
    } finally {
      l.stop()
    }
  })
})
