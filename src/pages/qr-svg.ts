/** A plain black-on-white QR code as inline SVG, drawn from the qrcode package's module matrix. */
import QRCode from 'qrcode'
import { esc } from './html'

/** `label` becomes the SVG's accessible name. A 4-module quiet zone keeps every decoder happy. */
export function qrSvg(text: string, label: string, sizePx = 240): string {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' })
  const n = modules.size
  const quiet = 4
  const total = n + quiet * 2
  let d = ''
  for (let y = 0; y < n; y++) {
    let x = 0
    while (x < n) {
      if (!modules.get(y, x)) {
        x++
        continue
      }
      const start = x
      while (x < n && modules.get(y, x)) x++
      d += `M${start + quiet} ${y + quiet}h${x - start}v1h-${x - start}z`
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="qr" viewBox="0 0 ${total} ${total}" width="${sizePx}" height="${sizePx}" ` +
    `role="img" aria-label="${esc(label)}" shape-rendering="crispEdges">` +
    `<rect width="${total}" height="${total}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`
  )
}

/** The Wi-Fi network string phones understand (ZXing's WIFI: format), with \ ; , : " escaped. */
export function wifiPayload(d: { ssid: string; password?: string; encryption?: string; hidden?: boolean }): string {
  const e = (s: string) => s.replace(/([\\;,:"])/g, '\\$1')
  const enc = d.encryption ?? 'WPA'
  let s = `WIFI:T:${enc};S:${e(d.ssid)};`
  if (enc !== 'nopass') s += `P:${e(d.password ?? '')};`
  if (d.hidden) s += 'H:true;'
  return `${s};`
}
