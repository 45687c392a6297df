import { describe, expect, test } from 'bun:test'
import { createHarness } from '../../test/helpers/in-process'
import { storedLinkViewOf } from '../links'
import { toResolvable } from './redirect.handler'

describe('toResolvable: the redirect view of a stored link', () => {
  test("is links' decoded view plus the destination with the link's UTM merged (the answer to a visit with no query)", async () => {
    const h = createHarness()
    const linkOptions = { key: 'utm', utm: { source: 'qr', campaign: 'spring' }, previewData: { title: 'Card' } }
    expect((await h.call('POST', '/links/link', { json: { data: { url: 'https://dest.example/page?a=1&utm_source=old' }, linkOptions } })).status).toBe(200)
    const row = h.deps.links.findLiveRow('localhost', 'utm')!
    expect(toResolvable(row)).toEqual({
      ...storedLinkViewOf(row),
      plainLocation: 'https://dest.example/page?a=1&utm_source=qr&utm_campaign=spring',
      brokenUrls: null,
    })
    expect(toResolvable(row)).toMatchObject({ utm: linkOptions.utm, previewData: linkOptions.previewData, hosted: false, Targeting: null })
  })

  test('a destination that is not http(s) is its own plain location', async () => {
    const h = createHarness()
    await h.call('POST', '/links/email', { json: { data: { to: 'sales@example.com' }, linkOptions: { key: 'mail', utm: { source: 'qr' } } } })
    const link = toResolvable(h.deps.links.findLiveRow('localhost', 'mail')!)
    expect(link.plainLocation).toBe('mailto:sales@example.com')
    expect(link.utm).toEqual({ source: 'qr' })
  })
})
