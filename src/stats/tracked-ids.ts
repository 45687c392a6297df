/**
 * The click ids a held row gathers between two flushes (conversion tracking), kept as bytes:
 * `<id>@<at ms>` separated by spaces, the row's `tracked` text. A tracked visit that merges into
 * a row used to add a string to it (a rope node and the `id@at` string, alive until the flush),
 * so under load every eden collection marked tens of thousands of them: generating and keeping
 * the ids made a tracked redirect about 15% slower than an untracked one. Here a visit adds
 * bytes to one growing array, and its id string dies young; the text is made once, when the
 * row leaves memory (`text`). Click ids are ASCII (redirect/click-id.ts makes them).
 */
export class TrackedIds {
  private bytes = Buffer.allocUnsafe(1024)
  private length = 0

  /** Adds a click id and its visit's time (ms). */
  add(id: string, at: number): void {
    const need = this.length + id.length + 24
    if (need > this.bytes.length) this.grow(need)
    const b = this.bytes
    let p = this.length
    if (p > 0) b[p++] = 32 // ' '
    for (let i = 0; i < id.length; i++) b[p++] = id.charCodeAt(i)
    b[p++] = 64 // '@'
    if (Number.isInteger(at) && at >= 0 && at < 1e16) {
      // The digits of `${at}` without making that string: the high part, then the low 8 digits zero-padded.
      const high = Math.floor(at / 1e8)
      let low = (at - high * 1e8) | 0
      if (high > 0) {
        p = writeDigits(b, p, high)
        for (let i = 7; i >= 0; i--) {
          const q = (low / 10) | 0
          b[p + i] = 48 + (low - q * 10)
          low = q
        }
        p += 8
      } else p = writeDigits(b, p, low)
    } else for (const c of String(at)) b[p++] = c.charCodeAt(0)
    this.length = p
  }

  /** The `tracked` text: `<id>@<at>` separated by spaces. */
  text(): string {
    return this.bytes.toString('latin1', 0, this.length)
  }

  private grow(need: number) {
    const bytes = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2))
    this.bytes.copy(bytes, 0, 0, this.length)
    this.bytes = bytes
  }
}

/** Writes the decimal digits of integer `n` (0 ≤ n < 1e8) at `p`; returns the position after them. */
function writeDigits(b: Uint8Array, p: number, n: number): number {
  let digits = 1
  for (let m = 10; m <= n; m *= 10) digits++
  for (let i = digits - 1; i >= 0; i--) {
    const q = (n / 10) | 0
    b[p + i] = 48 + (n - q * 10)
    n = q
  }
  return p + digits
}
