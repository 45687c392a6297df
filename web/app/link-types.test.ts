import { expect, test } from 'bun:test'
import { CREATE_TYPES, FILTER_TYPES } from '../../src/links/links.schema'
import { FILTER_LINK_TYPES, LINK_TYPES } from './link-types'

// The browser bundle cannot carry the server's schemas (TypeBox); this keeps its copy of the list true.
test("the dashboard's link types are the API's", () => {
  expect([...LINK_TYPES].sort()).toEqual([...CREATE_TYPES].sort())
})

test("the statistics screen's link-type filter offers the API's filter values", () => {
  expect([...FILTER_LINK_TYPES]).toEqual([...FILTER_TYPES])
})
