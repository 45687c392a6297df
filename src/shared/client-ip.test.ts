import { expect, test } from 'bun:test'
import { createClientIpResolver } from './client-ip'

test('X-Forwarded-For is honoured only from trusted proxies', () => {
  const none = createClientIpResolver([])
  expect(none('10.0.0.1', '1.2.3.4')).toBe('10.0.0.1')
  const r = createClientIpResolver(['10.0.0.0/8', '::1'])
  expect(r('10.0.0.1', '1.2.3.4')).toBe('1.2.3.4')
  expect(r('::ffff:10.0.0.1', '5.6.7.8, 10.0.0.2')).toBe('5.6.7.8')
  expect(r('::1', '2001:db8::1')).toBe('2001:db8::1')
  expect(r('192.168.1.1', '1.2.3.4')).toBe('192.168.1.1')
  expect(r('10.0.0.1', 'garbage')).toBe('10.0.0.1')
  expect(r('10.0.0.1', null)).toBe('10.0.0.1')
})

test('one hop and several hops answer alike: the rightmost untrusted address, else the leftmost', () => {
  const r = createClientIpResolver(['10.0.0.0/8'])
  expect(r('10.0.0.1', ' 1.2.3.4 ')).toBe('1.2.3.4')
  expect(r('10.0.0.1', '10.0.0.9')).toBe('10.0.0.9') // only trusted hops: the leftmost
  expect(r('10.0.0.1', '10.0.0.8, 10.0.0.9')).toBe('10.0.0.8')
  expect(r('10.0.0.1', ' ')).toBe('10.0.0.1')
  expect(r('10.0.0.1', '1.2.3.4, garbage')).toBe('10.0.0.1')
  // The same peer asked again (remembered) still decides by its own trust.
  expect(r('192.168.1.1', '1.2.3.4')).toBe('192.168.1.1')
  expect(r('192.168.1.1', '1.2.3.4')).toBe('192.168.1.1')
  expect(r('10.0.0.1', '5.6.7.8')).toBe('5.6.7.8')
})
