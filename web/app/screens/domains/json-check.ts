/**
 * Checks deep-link file text as the server does (a JSON object or array, at most 2,000
 * characters) and says where it breaks. Browsers word and place JSON.parse errors
 * differently (Safari gives no position), so a small scanner finds the spot itself.
 */
export const JSON_FILE_MAX = 2000

export interface JsonProblem {
  message: string
  /** 1-based, when known. */
  line: number | null
  column: number | null
}

class ScanError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message)
  }
}

/** Walks the text as JSON (RFC 8259) and throws a ScanError at the first character that cannot be. */
function scan(text: string): void {
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++
  }
  const what = () => (i >= text.length ? 'the text ends' : `unexpected ${JSON.stringify(text[i])}`)
  const expect = (c: string, wanted: string) => {
    if (text[i] !== c) throw new ScanError(`Expected ${wanted}, but ${what()}`, i)
    i++
  }
  const string = () => {
    expect('"', 'a "quoted" name')
    for (;;) {
      if (i >= text.length) throw new ScanError('A string is not closed with "', i)
      const c = text[i]!
      if (c === '"') return void i++
      if (c === '\n' || c < ' ') throw new ScanError('A string cannot span lines (missing closing ")', i)
      if (c === '\\') {
        const e = text[i + 1]
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new ScanError('Bad \\u escape', i)
          i += 6
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2
        else throw new ScanError('Bad escape: \\ must be followed by one of " \\ / b f n r t u', i)
      } else i++
    }
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      ws()
      if (text[i] === '}') return void i++
      for (;;) {
        ws()
        string()
        ws()
        expect(':', '":" after the name')
        value()
        ws()
        if (text[i] === ',') {
          i++
          ws()
          if (text[i] === '}') throw new ScanError('A comma before "}" is not allowed in JSON', i - 1)
          continue
        }
        expect('}', '"," or "}"')
        return
      }
    }
    if (c === '[') {
      i++
      ws()
      if (text[i] === ']') return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ',') {
          i++
          ws()
          if (text[i] === ']') throw new ScanError('A comma before "]" is not allowed in JSON', i - 1)
          continue
        }
        expect(']', '"," or "]"')
        return
      }
    }
    if (c === '"') {
      string()
      return
    }
    const m = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400))
    if (!m) throw new ScanError(`Expected a value, but ${what()}`, i)
    i += m[0].length
  }
  value()
  ws()
  if (i < text.length) throw new ScanError(`Unexpected ${JSON.stringify(text[i])} after the end of the JSON`, i)
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position)
  return { line: before.split('\n').length, column: position - before.lastIndexOf('\n') }
}

/** null when the text is fine (empty text means "no file"). */
export function jsonProblem(text: string): JsonProblem | null {
  if (text.trim() === '') return null
  if (text.length > JSON_FILE_MAX)
    return { message: `Too long: ${text.length.toLocaleString()} of at most ${JSON_FILE_MAX.toLocaleString()} characters`, line: null, column: null }
  try {
    scan(text)
  } catch (e) {
    if (!(e instanceof ScanError)) throw e
    return { message: e.message, ...lineAndColumn(text, e.pos) }
  }
  const start = text.trimStart()[0]
  if (start !== '{' && start !== '[') return { message: 'Must be a JSON object { … } or array [ … ]', line: 1, column: 1 }
  return null
}

export const describeProblem = (p: JsonProblem) => (p.line !== null ? `Line ${p.line}, column ${p.column}: ${p.message}` : p.message)
