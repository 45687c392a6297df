/** Wi-Fi links: network name, password with a copy button, security, and the join QR code. */
import { esc } from './html'
import { renderPage } from './layout'
import type { LandingLink } from './pages.types'
import { COPY_SCRIPT, ICONS } from './parts'
import { protectionOf, watermarked } from './protection'
import { qrSvg, wifiPayload } from './qr-svg'

const SECURITY: Record<string, string> = { WPA: 'WPA/WPA2/WPA3', WEP: 'WEP', nopass: 'None (open network)' }

export function renderWifiPage(link: LandingLink): string {
  const d = link.data ?? {}
  const ssid = String(d.ssid ?? '')
  const encryption = typeof d.encryption === 'string' && d.encryption in SECURITY ? d.encryption : 'WPA'
  const password = encryption === 'nopass' ? '' : String(d.password ?? '')
  const protection = protectionOf(link.option, link.domain)
  const payload = wifiPayload({ ssid, password, encryption, hidden: d.hidden === true })
  const title = `Wi-Fi: ${ssid}`
  const passwordBlock = password
    ? `<div class="field"><label for="password">Password</label>
<div class="copy-row"><input id="password" type="text" value="${esc(password)}" readonly spellcheck="false" autocomplete="off" autocapitalize="off">
<button type="button" class="btn" data-copy="password" data-status="copy-status">${ICONS.copy}Copy</button></div>
<p id="copy-status" class="muted" role="status" aria-live="polite"></p></div>`
    : `<div class="field"><span class="label">Password</span><p>No password needed.</p></div>`
  const body = `<article class="card">
<h1>${ICONS.wifi} <span>Wi-Fi: ${esc(ssid)}</span></h1>
<p class="muted">Join this Wi-Fi network${d.hidden === true ? ' (a hidden network: add it by name)' : ''}.</p>
${watermarked(
  `<div class="field"><label for="ssid">Network name (SSID)</label><input id="ssid" type="text" value="${esc(ssid)}" readonly spellcheck="false"></div>
${passwordBlock}
<div class="field"><span class="label">Security</span><p id="security">${esc(SECURITY[encryption])}</p></div>`,
  protection,
  'fields',
)}
</article>
<section class="card qr-card" aria-labelledby="qr-heading">
<h2 id="qr-heading">Scan to join</h2>
<figure>${qrSvg(payload, `QR code to join the Wi-Fi network ${ssid}`)}
<figcaption class="muted">Open your phone's camera and point it at the code, or copy the password above.</figcaption></figure>
</section>`
  return renderPage({
    link,
    title,
    description: `Join the Wi-Fi network ${ssid}.`,
    protection,
    scripts: [COPY_SCRIPT],
    css: `h1{display:flex;align-items:center;gap:.5rem}h1 svg{flex:none;width:1.6rem;height:1.6rem}
.field{margin-top:1rem}.field label,.field .label{display:block;font-weight:600;margin-bottom:.25rem}.field p{margin:.25rem 0}
input[type=text]{width:100%;min-height:44px;padding:.5rem .75rem;border:1px solid var(--line);border-radius:10px;background:var(--bg);color:var(--text);font:1.1rem ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.copy-row{display:flex;gap:.5rem}.copy-row input{flex:1;min-width:0}
.qr-card{text-align:center}.qr-card figure{margin:0}.qr{width:min(100%,240px);height:auto;display:block;margin:.5rem auto;border-radius:8px}`,
    body,
  })
}
