/**
 * The wasm engines (resvg for SVG → PNG; zxing-cpp and ZBar for decoding) and the
 * fonts, all embedded in the binary: their default loaders fetch from a CDN or beside
 * the script, which fails offline and inside `bun build --compile`.
 */
import { initWasm, Resvg } from '@resvg/resvg-wasm'
import resvgWasmPath from '@resvg/resvg-wasm/index_bg.wasm' with { type: 'file' }
import { prepareZXingModule, readBarcodes, type ReaderOptions } from 'zxing-wasm/reader'
import zxingWasmPath from 'zxing-wasm/reader/zxing_reader.wasm' with { type: 'file' }
import { getInstance, setModuleArgs, ZBarScanner, ZBarSymbolType, ZBarConfigType, scanGrayBuffer } from '@undecaf/zbar-wasm'
import zbarWasmPath from '@undecaf/zbar-wasm/dist/zbar.wasm' with { type: 'file' }
import inter400Path from '../../web/fonts/inter-latin-400-normal.woff2' with { type: 'file' }
import inter700Path from '../../web/fonts/inter-latin-700-normal.woff2' with { type: 'file' }

export { Resvg, readBarcodes, type ReaderOptions }

let ready: Promise<void> | null = null
let fonts: Uint8Array[] = []
let zbarScanner: ZBarScanner | null = null

/** Loads both engines once; every render/decode awaits this first. */
export function enginesReady(): Promise<void> {
  ready ??= (async () => {
    const [resvgWasm, zxingWasm, zbarWasm, f400, f700] = await Promise.all(
      [resvgWasmPath, zxingWasmPath, zbarWasmPath, inter400Path, inter700Path].map((p) => Bun.file(p).arrayBuffer()),
    )
    await initWasm(resvgWasm!)
    await prepareZXingModule({ overrides: { wasmBinary: zxingWasm! }, fireImmediately: true })
    setModuleArgs({ wasmBinary: zbarWasm } as Parameters<typeof setModuleArgs>[0])
    await getInstance()
    zbarScanner = await ZBarScanner.create()
    zbarScanner.setConfig(ZBarSymbolType.ZBAR_NONE, ZBarConfigType.ZBAR_CFG_ENABLE, 0)
    zbarScanner.setConfig(ZBarSymbolType.ZBAR_QRCODE, ZBarConfigType.ZBAR_CFG_ENABLE, 1)
    fonts = [new Uint8Array(f400!), new Uint8Array(f700!)]
  })()
  return ready
}

/** The embedded fonts (Inter 400/700); resvg uses only fonts handed to it. */
export function fontBuffers(): Uint8Array[] {
  return fonts
}

export const FONT_FAMILY = 'Inter'

/** Texts ZBar finds in 8-bit luminance (QR only). ZBar never reads light-on-dark codes. */
export async function zbarReadGrey(grey: Uint8Array, width: number, height: number): Promise<string[]> {
  await enginesReady()
  const buf = grey.byteOffset === 0 && grey.byteLength === grey.buffer.byteLength ? grey.buffer : grey.slice().buffer
  const symbols = await scanGrayBuffer(buf as ArrayBuffer, width, height, zbarScanner!)
  return symbols.map((s) => s.decode('utf-8'))
}
