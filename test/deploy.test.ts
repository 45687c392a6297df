/**
 * The files in deploy/ as an operator installs them: the systemd unit passes
 * `systemd-analyze verify` with no warning and keeps its hardening; the example config is
 * valid for the binary; the Grafana dashboard reads metrics the server exports.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { shortlinkCommand } from './helpers/server'

const ROOT = resolve(import.meta.dir, '..')
const unit = readFileSync(join(ROOT, 'deploy/shortlink.service'), 'utf8')
const directives = new Map<string, string[]>()
for (const line of unit.split('\n')) {
  const m = /^([A-Za-z]+)=(.*)$/.exec(line)
  if (m) directives.set(m[1]!, [...(directives.get(m[1]!) ?? []), m[2]!])
}

test('the unit passes systemd-analyze verify without a warning', async () => {
  // verify checks that ExecStart names an executable: the binary under test stands in for /usr/local/bin/shortlink.
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-unit-'))
  const bin = shortlinkCommand()[0] === 'bun' ? process.execPath : shortlinkCommand()[0]!
  writeFileSync(join(dir, 'shortlink.service'), unit.replaceAll('/usr/local/bin/shortlink', bin))
  const p = Bun.spawn(['systemd-analyze', 'verify', '--man=no', join(dir, 'shortlink.service')], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  expect({ code: await p.exited, output: `${out}${err}`.trim() }).toEqual({ code: 0, output: '' })
})

test('the unit runs as its own user, read-only but for the data dir, with only the capability to bind ports below 1024', () => {
  expect(directives.get('User')).toEqual(['shortlink'])
  expect(directives.get('ProtectSystem')).toEqual(['strict'])
  expect(directives.get('ReadWritePaths')![0]!.split(' ')).toContain('/var/lib/shortlink')
  expect(directives.get('AmbientCapabilities')).toEqual(['CAP_NET_BIND_SERVICE'])
  expect(directives.get('CapabilityBoundingSet')).toEqual(['CAP_NET_BIND_SERVICE'])
  expect(directives.get('NoNewPrivileges')).toEqual(['true'])
  expect(directives.get('ExecStart')![0]).toBe('/usr/local/bin/shortlink serve --config /etc/shortlink/shortlink.toml')
})

test('the example config is valid and keeps its data where the unit lets it write', async () => {
  const p = Bun.spawn([...shortlinkCommand(), 'check', '--config', join(ROOT, 'deploy/shortlink.toml')], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  expect({ code: await p.exited, err }).toEqual({ code: 0, err: '' })
  expect(out).toContain('dataDir /var/lib/shortlink')
  const config = Bun.TOML.parse(readFileSync(join(ROOT, 'deploy/shortlink.toml'), 'utf8')) as { backup: { dir: string } }
  expect(directives.get('ReadWritePaths')![0]!.split(' ')).toContain(config.backup.dir)
})

test('the Grafana dashboard queries only metrics the server defines', async () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[]
  }
  const { metrics } = await import('../src/metrics')
  // Importing the modules that define their metrics, as the server does.
  await import('../src/operations')
  await import('../src/backup')
  await import('../src/redirect')
  await import('../src/stats')
  await import('../src/tls')
  const exported = new Set(
    (await metrics.render())
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]!),
  )
  const used = dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => [...t.expr.matchAll(/shortlink_[a-z_]+/g)].map((m) => m[0])))
  expect(used.length).toBeGreaterThan(10)
  for (const name of used) expect([...exported].some((e) => name === e || name.startsWith(`${e}_`))).toBe(true)
})
