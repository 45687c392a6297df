import { expect, test } from 'bun:test'
import { CREATE_TYPES } from '../../src/links/links.schema'
import { LINK_TYPES } from './link-types'

// The browser bundle cannot carry the server's schemas (TypeBox); this keeps its copy of the list true.
test("the dashboard's link types are the API's", () => {
  expect([...LINK_TYPES].sort()).toEqual([...CREATE_TYPES].sort())
})
