import { expect, test } from 'bun:test'
import { checkedAddress, isPrivateAddress } from './address'

const judged = (ips: string[]) => ips.map((ip) => ({ ip, private: isPrivateAddress(ip) }))

test('IPv6 forms that carry a private IPv4 address are refused, in dotted and hex notation', () => {
  const refused = [
    '127.0.0.1',
    '10.1.2.3',
    '169.254.169.254',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    'fec0::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1', // IPv4-mapped
    '::127.0.0.1',
    '::7f00:1',
    '::a9fe:a9fe', // IPv4-compatible
    '::ffff:0:127.0.0.1',
    '::ffff:0:a00:1', // SIIT (IPv4-translated)
    '64:ff9b::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe', // NAT64 well-known prefix
    '64:ff9b:1::8.8.8.8', // local-use NAT64: refused whole
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '2002:c0a8:0101::', // 6to4
    '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1
    '100::1',
    '2001:db8::1',
    'not-an-ip',
    '1::2::3',
  ]
  expect(judged(refused)).toEqual(refused.map((ip) => ({ ip, private: true })))
})

test('public addresses, also when carried inside IPv6, are allowed', () => {
  const allowed = [
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ]
  expect(judged(allowed)).toEqual(allowed.map((ip) => ({ ip, private: false })))
})

test('a refused address names the host, never the internal address it resolved to', async () => {
  const rules = { allowPrivateNetworks: false, field: 'url', resolveHost: async () => ['10.20.30.40'] }
  const error = await checkedAddress(new URL('https://intranet.example/logo.png'), rules).then(
    () => null,
    (e: Error) => e,
  )
  expect(error?.message).toBe("'url' intranet.example resolves to a private, loopback or link-local address; such addresses are not fetched")
})

test('a public name answers the address to connect to; literals and allowed private networks need no pinning', async () => {
  const rules = { allowPrivateNetworks: false, field: 'url', resolveHost: async () => ['93.184.216.34', '2606:2800:220:1::1'] }
  expect(await checkedAddress(new URL('https://example.com/x'), rules)).toBe('93.184.216.34')
  expect(await checkedAddress(new URL('https://93.184.216.34/x'), rules)).toBeNull()
  expect(await checkedAddress(new URL('http://localhost/x'), { ...rules, allowPrivateNetworks: true })).toBeNull()
})
