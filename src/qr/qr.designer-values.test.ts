import { expect, test } from 'bun:test'
import * as designer from '../../web/app/screens/qr-designer/design'
import * as server from './qr.schema'

// The dashboard's QR designer (web/app) cannot carry the server's schema library; this keeps its copies true.
test("the designer offers exactly the API's design values", () => {
  const pick = (m: typeof server | typeof designer) => ({
    body: m.BODY_STYLES,
    frames: m.EYE_FRAME_STYLES,
    balls: m.EYE_BALLS_FOR,
    fills: m.FILL_TYPES,
    directions: m.DIRECTIONS,
    logoShapes: m.LOGO_SHAPES,
    logoMax: m.LOGO_MAX_SIZE,
  })
  expect(pick(designer)).toEqual(pick(server))
})
