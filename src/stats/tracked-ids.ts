/**
 * The click ids a held row gathers between two flushes (conversion tracking), kept as bytes:
 * the ids separated by spaces, the row's `tracked` text (each id carries its visit's time,
 * click-id.ts). A tracked visit that merges into a row used to add a string to it (a rope node
 * and an `id@at` string, alive until the flush), so under load every eden collection marked tens
 * of thousands of them: generating and keeping the ids made a tracked redirect about 15% slower
 * than an untracked one. Here a visit adds bytes to one growing array, and its id string dies
 * young; the text is made once, when the row leaves memory (`text`). Click ids are ASCII.
 */
export class TrackedIds {
  private bytes = Buffer.allocUnsafe(1024)
  private length = 0

  /** Adds a click id. */
  add(id: string): void {
    const need = this.length + id.length + 1
    if (need > this.bytes.length) this.grow(need)
    const b = this.bytes
    let p = this.length
    if (p > 0) b[p++] = 32 // ' '
    for (let i = 0; i < id.length; i++) b[p++] = id.charCodeAt(i)
    this.length = p
  }

  /** The `tracked` text: the ids separated by spaces. */
  text(): string {
    return this.bytes.toString('latin1', 0, this.length)
  }

  private grow(need: number) {
    const bytes = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2))
    this.bytes.copy(bytes, 0, 0, this.length)
    this.bytes = bytes
  }
}
