/** Checks deep-link file text as the server does (a JSON object or array, at most 2,000 characters) and says where it breaks. */
export const JSON_FILE_MAX = 2000

export interface JsonProblem {
  message: string
  /** 1-based, when the parser tells a position. */
  line: number | null
  column: number | null
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position)
  const line = before.split('\n').length
  return { line, column: position - before.lastIndexOf('\n') }
}

/** null when the text is fine (empty text means "no file"). */
export function jsonProblem(text: string): JsonProblem | null {
  if (text.trim() === '') return null
  if (text.length > JSON_FILE_MAX)
    return { message: `Too long: ${text.length.toLocaleString()} of at most ${JSON_FILE_MAX.toLocaleString()} characters`, line: null, column: null }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    const raw = (e as Error).message
    // Browsers name the spot differently: "at position 42", "(line 3 column 5)", "line 3 column 5 of the JSON data".
    const lc = /line (\d+) column (\d+)/.exec(raw)
    const pos = /position (\d+)/.exec(raw)
    const at = lc ? { line: Number(lc[1]), column: Number(lc[2]) } : pos ? lineAndColumn(text, Number(pos[1])) : null
    const message = raw
      .replace(/^JSON\.parse: /, '')
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .replace(/ at line \d+ column \d+ of the JSON data/, '')
      .replace(/,? in JSON at position \d+/, '')
      .replace(/ at position \d+/, '')
    return { message: message || 'Not valid JSON', line: at?.line ?? null, column: at?.column ?? null }
  }
  if (typeof parsed !== 'object' || parsed === null) return { message: 'Must be a JSON object { … } or array [ … ]', line: 1, column: 1 }
  return null
}

export const describeProblem = (p: JsonProblem) => (p.line !== null ? `Line ${p.line}, column ${p.column}: ${p.message}` : p.message)
