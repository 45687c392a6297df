/**
 * The live preview: the server renders the design being edited (POST /qr/render) and
 * decodes it before answering, so what the user sees is what scans. Changes are debounced
 * and a newer render cancels an older one, so typing a colour does not flood the server.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, api, errorText } from '../../api'
import { cleaned, type QrOptions, repairsOf } from './design'

export const PREVIEW_DELAY_MS = 350

export interface Preview {
  /** An object URL of the last image the server rendered (kept while a refused design is shown). */
  url: string | null
  /** The server's repairs, in plain words. */
  repairs: string[]
  /** The server's reason for refusing the design (422), or another error. */
  refusal: string | null
  busy: boolean
}

export interface RenderRequest {
  qrOptions: QrOptions
  linkId?: string
  width?: number
  format?: 'image' | 'svg'
}

/** One render of a design as a Blob, with the repairs the server made. */
export async function renderDesign(req: RenderRequest, signal?: AbortSignal): Promise<{ blob: Blob; repairs: string[] }> {
  const body = { ...req, qrOptions: cleaned(req.qrOptions) }
  const { data, response } = await api<Blob>('POST', '/qr/render', { body, blob: true, signal })
  return { blob: data, repairs: repairsOf(response.headers.get('x-qr-repaired')) }
}

export function usePreview(design: QrOptions, linkId: string | undefined, enabled: boolean): Preview {
  const [state, setState] = useState<Preview>({ url: null, repairs: [], refusal: null, busy: enabled })
  const urlRef = useRef<string | null>(null)
  const key = JSON.stringify(cleaned(design))
  useEffect(() => {
    if (!enabled) return
    const controller = new AbortController()
    setState((s) => ({ ...s, busy: true }))
    const timer = setTimeout(() => {
      renderDesign({ qrOptions: design, linkId, width: 360 }, controller.signal).then(
        ({ blob, repairs }) => {
          if (controller.signal.aborted) return
          if (urlRef.current) URL.revokeObjectURL(urlRef.current)
          urlRef.current = URL.createObjectURL(blob)
          setState({ url: urlRef.current, repairs, refusal: null, busy: false })
        },
        (e) => {
          if (controller.signal.aborted || (e as Error).name === 'AbortError') return
          const refusal = e instanceof ApiError && e.status === 422 ? e.message : errorText(e)
          setState((s) => ({ ...s, repairs: [], refusal, busy: false }))
        },
      )
    }, PREVIEW_DELAY_MS)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [key, linkId, enabled])
  useEffect(
    () => () => {
      if (urlRef.current) URL.revokeObjectURL(urlRef.current)
    },
    [],
  )
  return state
}
