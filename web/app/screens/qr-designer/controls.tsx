/** The designer's form sections: shapes, colours, logo, frame and the code's technical settings. */
import { useRef, useState } from 'preact/hooks'
import { api, errorText } from '../../api'
import { Button, Field, toast } from '../../ui'
import {
  BODY_STYLES,
  CORRECT_LEVELS,
  colours,
  DEFAULT_BACKGROUND,
  DEFAULT_BODY,
  DIRECTIONS,
  EYE_BALLS_FOR,
  EYE_FRAME_STYLES,
  type EyeFrameStyle,
  FILL_TYPES,
  type FillType,
  LOGO_MAX_SIZE,
  LOGO_SHAPES,
  longHex,
  MAX_FRAME_TEXTS,
  type QrOptions,
  styleLabel,
} from './design'

export interface FileRecord {
  id: string
  name: string
  size: number
  mimeType: string
  extension: string
}

type Update = (change: (d: QrOptions) => void) => void
const FILL_LABELS: Record<FillType, string> = { color: 'One colour', 'linear-gradient': 'Linear gradient', 'radial-gradient': 'Radial gradient' }

export function ShapeControls({ design, update }: { design: QrOptions; update: Update }) {
  const body = design.patterns?.body ?? {}
  const eye = design.patterns?.eye ?? {}
  const ring = (eye.style_id ?? 'square') as EyeFrameStyle
  const balls = EYE_BALLS_FOR[ring] ?? EYE_BALLS_FOR.square
  const ball = eye.ball_style_id && balls.includes(eye.ball_style_id) ? eye.ball_style_id : balls[0]
  return (
    <fieldset class="qr-designer-section">
      <legend>Shapes</legend>
      <div class="qr-designer-row">
        <Field label="Body style">
          {(p) => (
            <select
              {...p}
              value={body.style_id ?? 'square'}
              onChange={(e) => update((d) => (pat(d).body = { ...pat(d).body, style_id: e.currentTarget.value }))}
            >
              {BODY_STYLES.map((s) => (
                <option key={s} value={s}>
                  {styleLabel(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Eye frame style">
          {(p) => (
            <select
              {...p}
              value={ring}
              onChange={(e) =>
                update((d) => {
                  const next = e.currentTarget.value as EyeFrameStyle
                  const e2 = { ...pat(d).eye, style_id: next }
                  // Keep the ball only when the new ring allows it (mixed shapes do not scan everywhere).
                  if (e2.ball_style_id && !EYE_BALLS_FOR[next].includes(e2.ball_style_id)) delete e2.ball_style_id
                  pat(d).eye = e2
                })
              }
            >
              {EYE_FRAME_STYLES.map((s) => (
                <option key={s} value={s}>
                  {styleLabel(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Eye centre style" hint="Centres that scan reliably with this frame.">
          {(p) => (
            <select {...p} value={ball} onChange={(e) => update((d) => (pat(d).eye = { ...pat(d).eye, ball_style_id: e.currentTarget.value }))}>
              {balls.map((s) => (
                <option key={s} value={s}>
                  {styleLabel(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
    </fieldset>
  )
}

export function ColourControls({ design, update }: { design: QrOptions; update: Update }) {
  const body = design.patterns?.body ?? {}
  const eye = design.patterns?.eye ?? {}
  const bg = design.patterns?.background ?? {}
  const fill = body.type ?? 'color'
  const [c1, c2] = colours(body.value, DEFAULT_BODY)
  const setBody = (value: string) => update((d) => (pat(d).body = { ...pat(d).body, value }))
  const eyeOwn = eye.value !== undefined
  return (
    <fieldset class="qr-designer-section">
      <legend>Colours</legend>
      <div class="qr-designer-row">
        <Field label="Fill">
          {(p) => (
            <select
              {...p}
              value={fill}
              onChange={(e) =>
                update((d) => {
                  const type = e.currentTarget.value as FillType
                  const b = { ...pat(d).body, type }
                  b.value = type === 'color' ? c1 : `${c1},${c2}`
                  if (type !== 'linear-gradient') delete b.direction
                  pat(d).body = b
                })
              }
            >
              {FILL_TYPES.map((t) => (
                <option key={t} value={t}>
                  {FILL_LABELS[t]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={fill === 'color' ? 'Foreground colour' : 'Gradient start colour'}>
          {(p) => (
            <input {...p} type="color" value={c1} onInput={(e) => setBody(fill === 'color' ? e.currentTarget.value : `${e.currentTarget.value},${c2}`)} />
          )}
        </Field>
        {fill !== 'color' ? (
          <Field label="Gradient end colour">
            {(p) => <input {...p} type="color" value={c2} onInput={(e) => setBody(`${c1},${e.currentTarget.value}`)} />}
          </Field>
        ) : null}
        {fill === 'linear-gradient' ? (
          <Field label="Gradient direction">
            {(p) => (
              <select
                {...p}
                value={body.direction ?? 'to-right'}
                onChange={(e) => update((d) => (pat(d).body = { ...pat(d).body, direction: e.currentTarget.value }))}
              >
                {DIRECTIONS.map((x) => (
                  <option key={x} value={x}>
                    {styleLabel(x)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
      </div>
      <div class="qr-designer-row">
        <label class="check">
          <input
            type="checkbox"
            checked={!eyeOwn}
            onChange={(e) =>
              update((d) => {
                const e2 = { ...pat(d).eye }
                if (e.currentTarget.checked) {
                  delete e2.value
                  delete e2.type
                  delete e2.direction
                } else e2.value = c1
                pat(d).eye = e2
              })
            }
          />
          Same colour for the eyes
        </label>
        {eyeOwn ? (
          <Field label="Eye colour">
            {(p) => (
              <input
                {...p}
                type="color"
                value={colours(eye.value, c1)[0]}
                onInput={(e) => update((d) => (pat(d).eye = { ...pat(d).eye, type: 'color', value: e.currentTarget.value }))}
              />
            )}
          </Field>
        ) : null}
      </div>
      <div class="qr-designer-row">
        <Field label="Background colour">
          {(p) => (
            <input
              {...p}
              type="color"
              disabled={bg.type === 'transparent'}
              value={longHex(bg.value, DEFAULT_BACKGROUND)}
              onInput={(e) => update((d) => (pat(d).background = { ...pat(d).background, value: e.currentTarget.value }))}
            />
          )}
        </Field>
        <label class="check">
          <input
            type="checkbox"
            checked={bg.type === 'transparent'}
            onChange={(e) => update((d) => (pat(d).background = { ...pat(d).background, type: e.currentTarget.checked ? 'transparent' : 'color' }))}
          />
          Transparent background
        </label>
      </div>
      <p class="hint">Dark dots on a light background scan best. Pale colours are refused; light-on-dark designs are turned over so they scan.</p>
    </fieldset>
  )
}

export function LogoControls({
  design,
  update,
  files,
  onUploaded,
}: {
  design: QrOptions
  update: Update
  files: FileRecord[]
  onUploaded: (f: FileRecord) => void
}) {
  const logo = design.logo
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const input = useRef<HTMLInputElement>(null)
  const images = files.filter((f) => ['image/png', 'image/jpeg', 'image/svg+xml'].includes(f.mimeType))
  const upload = async (file: File | undefined) => {
    if (!file) return
    setBusy(true)
    setError(null)
    const form = new FormData()
    form.append('file', file)
    try {
      const { data } = await api<FileRecord>('POST', '/files', { form })
      onUploaded(data)
      update((d) => (d.logo = { ...d.logo, value: data.id }))
      toast(`Uploaded ${data.name}`)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
      if (input.current) input.current.value = ''
    }
  }
  return (
    <fieldset class="qr-designer-section">
      <legend>Logo</legend>
      <div class="qr-designer-row">
        <Field label="Logo image" hint="Your uploaded images (PNG, JPEG or SVG).">
          {(p) => (
            <select
              {...p}
              value={logo?.value ?? ''}
              onChange={(e) => {
                const value = e.currentTarget.value
                update((d) => {
                  if (value) d.logo = { ...d.logo, value }
                  else delete d.logo
                })
              }}
            >
              <option value="">No logo</option>
              {logo?.value && !images.some((f) => f.id === logo.value) ? <option value={logo.value}>{logo.value}</option> : null}
              {images.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Upload a logo" error={error}>
          {(p) => (
            <input
              {...p}
              ref={input}
              type="file"
              accept="image/png,image/jpeg,image/svg+xml"
              disabled={busy}
              onChange={(e) => upload(e.currentTarget.files?.[0])}
            />
          )}
        </Field>
      </div>
      {logo?.value ? (
        <div class="qr-designer-row">
          <Field label="Logo size (% of the code)" hint={`1 to ${LOGO_MAX_SIZE}; made smaller when the code would not scan.`}>
            {(p) => (
              <input
                {...p}
                type="number"
                min={1}
                max={LOGO_MAX_SIZE}
                value={logo.size ?? 10}
                onChange={(e) => {
                  const n = Math.round(Number(e.currentTarget.value))
                  if (n >= 1 && n <= LOGO_MAX_SIZE) update((d) => (d.logo = { ...d.logo!, size: n }))
                }}
              />
            )}
          </Field>
          <Field label="Logo shape">
            {(p) => (
              <select {...p} value={logo.shape ?? 'square'} onChange={(e) => update((d) => (d.logo = { ...d.logo!, shape: e.currentTarget.value }))}>
                {LOGO_SHAPES.map((s) => (
                  <option key={s} value={s}>
                    {styleLabel(s)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <label class="check">
            <input
              type="checkbox"
              checked={logo.hasBackground !== false}
              onChange={(e) => update((d) => (d.logo = { ...d.logo!, hasBackground: e.currentTarget.checked }))}
            />
            Clear the dots behind the logo
          </label>
        </div>
      ) : null}
    </fieldset>
  )
}

export function FrameControls({ design, update, files }: { design: QrOptions; update: Update; files: FileRecord[] }) {
  const frame = design.frame
  const texts = frame?.add_texts ?? []
  const images = files.filter((f) => f.mimeType === 'image/png' || f.mimeType === 'image/jpeg')
  const setText = (i: number, change: Record<string, unknown>) =>
    update((d) => {
      const list = [...(d.frame?.add_texts ?? [])]
      list[i] = { ...list[i], ...change }
      d.frame = { ...d.frame, add_texts: list }
    })
  return (
    <fieldset class="qr-designer-section">
      <legend>Frame</legend>
      <label class="check">
        <input
          type="checkbox"
          checked={!!frame}
          onChange={(e) =>
            update((d) => {
              if (e.currentTarget.checked) d.frame = { add_texts: [{ content: 'Scan me' }] }
              else delete d.frame
            })
          }
        />
        Put the code in a frame with text
      </label>
      {frame ? (
        <>
          <Field label="Frame image" hint="Built-in: a plain frame with the texts under the code.">
            {(p) => (
              <select
                {...p}
                value={frame.value ?? ''}
                onChange={(e) => {
                  const value = e.currentTarget.value
                  update((d) => {
                    const f = { ...d.frame }
                    if (value) f.value = value
                    else delete f.value
                    d.frame = f
                  })
                }}
              >
                <option value="">Built-in frame</option>
                {frame.value && !images.some((f) => f.id === frame.value) ? <option value={frame.value}>{frame.value}</option> : null}
                {images.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {texts.map((t, i) => (
            <div class="qr-designer-row qr-designer-text" key={i}>
              <Field label={`Frame text ${i + 1}`}>
                {(p) => <input {...p} type="text" maxLength={100} value={t.content ?? ''} onInput={(e) => setText(i, { content: e.currentTarget.value })} />}
              </Field>
              <Field label={`Text ${i + 1} colour`}>
                {(p) => <input {...p} type="color" value={longHex(t.color, '#000000')} onInput={(e) => setText(i, { color: e.currentTarget.value })} />}
              </Field>
              <label class="check">
                <input type="checkbox" checked={!!t.bold} onChange={(e) => setText(i, { bold: e.currentTarget.checked })} />
                Bold
              </label>
              <Button
                kind="ghost"
                aria-label={`Remove frame text ${i + 1}`}
                onClick={() => update((d) => (d.frame = { ...d.frame, add_texts: texts.filter((_, j) => j !== i) }))}
              >
                Remove
              </Button>
            </div>
          ))}
          {texts.length < MAX_FRAME_TEXTS ? (
            <Button onClick={() => update((d) => (d.frame = { ...d.frame, add_texts: [...texts, { content: '' }] }))}>Add a text line</Button>
          ) : null}
        </>
      ) : null}
    </fieldset>
  )
}

export function AdvancedControls({ design, update }: { design: QrOptions; update: Update }) {
  return (
    <fieldset class="qr-designer-section">
      <legend>Scanning</legend>
      <div class="qr-designer-row">
        <Field label="Error correction" hint="Higher survives damage and logos better, with more dots. A logo uses High.">
          {(p) => (
            <select {...p} value={String(design.correctLevel ?? 1)} onChange={(e) => update((d) => (d.correctLevel = Number(e.currentTarget.value)))}>
              {CORRECT_LEVELS.map((l) => (
                <option key={l.value} value={String(l.value)}>
                  {l.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Margin (modules)" hint="The quiet zone around the code, 0 to 20; 4 is the standard.">
          {(p) => (
            <input
              {...p}
              type="number"
              min={0}
              max={20}
              value={design.space ?? 4}
              onChange={(e) => {
                const n = Math.round(Number(e.currentTarget.value))
                if (n >= 0 && n <= 20) update((d) => (d.space = n))
              }}
            />
          )}
        </Field>
      </div>
    </fieldset>
  )
}

/** The design's `patterns`, created on first use. */
function pat(d: QrOptions): NonNullable<QrOptions['patterns']> {
  d.patterns ??= {}
  return d.patterns
}
