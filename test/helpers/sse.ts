/**
 * A Server-Sent Events reader for tests (what EventSource does, over fetch so a test can set
 * headers, trust the server's CA and cut the connection when it wants): messages with their
 * id, event and data, and comment lines, in arrival order.
 */
export interface SseMessage {
  id: string | null
  event: string | null
  data: string
  at: number
}

export interface SseStream {
  messages: SseMessage[]
  comments: { text: string; at: number }[]
  /** Settles when the server ends the stream (or the connection breaks). */
  ended: Promise<void>
  closed: boolean
  close(): void
}

export async function openSse(url: string, init: RequestInit & { tls?: { ca: string } } = {}): Promise<{ response: Response; stream: SseStream | null }> {
  const controller = new AbortController()
  const response = await fetch(url, { ...init, signal: controller.signal } as RequestInit)
  if (response.status !== 200 || !response.body) return { response, stream: null }
  const stream: SseStream = {
    messages: [],
    comments: [],
    ended: Promise.resolve(),
    closed: false,
    close() {
      stream.closed = true
      controller.abort()
    },
  }
  const decoder = new TextDecoder()
  stream.ended = (async () => {
    let buffer = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const message: SseMessage = { id: null, event: null, data: '', at: Date.now() }
          let isMessage = false
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) stream.comments.push({ text: line.slice(1).trim(), at: Date.now() })
            else if (line.startsWith('id: ')) message.id = line.slice(4)
            else if (line.startsWith('event: ')) message.event = line.slice(7)
            else if (line.startsWith('data: ')) {
              message.data += (isMessage && message.data ? '\n' : '') + line.slice(6)
              isMessage = true
            }
          }
          if (isMessage) stream.messages.push(message)
        }
      }
    } catch {
      // aborted or cut
    } finally {
      stream.closed = true
    }
  })()
  return { response, stream }
}
