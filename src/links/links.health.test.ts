import { expect, test } from 'bun:test'
import { healthUrlsOf } from './links.health'

test('the URLs checked for a link: its destination, targeting URLs and A/B test variants, each once', () => {
  const row = {
    link_type: 'link',
    data: JSON.stringify({ url: 'https://shop.example/a' }),
    options: JSON.stringify({
      Targeting: { targetType: 'device', targetDatas: { ios: 'https://ios.example/', android: 'https://shop.example/a' } },
      testVariants: [
        { url: 'https://shop.example/a', percentage: 50 },
        { url: 'https://shop.example/b', percentage: 50 },
      ],
    }),
  }
  expect(healthUrlsOf(row).sort()).toEqual(['https://ios.example/', 'https://shop.example/a', 'https://shop.example/b'])
  expect(healthUrlsOf({ ...row, link_type: 'text' })).toEqual([])
})
