/** Hands bytes made in the browser (a CSV, a rendered QR code) to it as a file download through a Blob URL. */
export function downloadBlob(blob: Blob, filename: string) {
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  // The download has started from the click; the URL is kept a while for slow browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
