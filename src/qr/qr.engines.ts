/**
 * The wasm decoders (zxing-cpp and ZBar), embedded in the binary: their default loaders
 * fetch from a CDN or beside the script, which fails offline and inside
 * `bun build --compile`. The scan worker loads these and nothing else; the renderer's
 * rasterisers live in qr.raster.ts.
 */

import { getInstance, scanGrayBuffer, setModuleArgs, ZBarConfigType, ZBarScanner, ZBarSymbolType } from '@undecaf/zbar-wasm'
import zbarWasmPath from '@undecaf/zbar-wasm/dist/zbar.wasm' with { type: 'file' }
import { prepareZXingModule, type ReaderOptions, readBarcodes } from 'zxing-wasm/reader'
import zxingWasmPath from 'zxing-wasm/reader/zxing_reader.wasm' with { type: 'file' }

export { type ReaderOptions, readBarcodes }

let ready: Promise<void> | null = null
let zbarScanner: ZBarScanner | null = null

/** Loads both decoders once; every decode awaits this first. */
export function enginesReady(): Promise<void> {
  ready ??= (async () => {
    const [zxingWasm, zbarWasm] = await Promise.all([zxingWasmPath, zbarWasmPath].map((p) => Bun.file(p).arrayBuffer()))
    await prepareZXingModule({ overrides: { wasmBinary: zxingWasm! }, fireImmediately: true })
    setModuleArgs({ wasmBinary: zbarWasm } as Parameters<typeof setModuleArgs>[0])
    await getInstance()
    zbarScanner = await ZBarScanner.create()
    zbarScanner.setConfig(ZBarSymbolType.ZBAR_NONE, ZBarConfigType.ZBAR_CFG_ENABLE, 0)
    zbarScanner.setConfig(ZBarSymbolType.ZBAR_QRCODE, ZBarConfigType.ZBAR_CFG_ENABLE, 1)
  })()
  return ready
}

/** Texts ZBar finds in 8-bit luminance (QR only). ZBar never reads light-on-dark codes. */
export async function zbarReadGrey(grey: Uint8Array, width: number, height: number): Promise<string[]> {
  await enginesReady()
  const buf = grey.byteOffset === 0 && grey.byteLength === grey.buffer.byteLength ? grey.buffer : grey.slice().buffer
  const symbols = await scanGrayBuffer(buf as ArrayBuffer, width, height, zbarScanner!)
  return symbols.map((s) => s.decode('utf-8'))
}
