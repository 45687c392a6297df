import { Type as t } from '@sinclair/typebox'

/** `page` from 1 and `pageSize` with per-resource bounds, as the seed's Limits table says. */
export function pagingQuery(maxPageSize: number, minPageSize = 1, defaultPageSize = 20) {
  return {
    page: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
    pageSize: t.Optional(
      t.Integer({
        minimum: minPageSize,
        maximum: maxPageSize,
        default: defaultPageSize,
        description: `Items per page, ${minPageSize}-${maxPageSize}.`,
      }),
    ),
  }
}

export function sortOrderQuery() {
  return t.Optional(t.Union([t.Literal('desc'), t.Literal('asc')], { default: 'desc', description: 'Sort order.' }))
}

export function pageWindow(page: number | undefined, pageSize: number | undefined, defaultPageSize = 20) {
  const size = pageSize ?? defaultPageSize
  const p = page ?? 1
  return { limit: size, offset: (p - 1) * size, page: p, pageSize: size }
}
