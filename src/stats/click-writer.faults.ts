/**
 * TEST ONLY: the environment variable SHORTLINK_TEST_WRITER_FAULT breaks the click writer
 * threads on purpose, so tests can check that a broken writer is noticed and that every click
 * still arrives (test/click-writer-faults.e2e.test.ts). Never set it in production.
 *
 *   <kind>@<when>[*<writers>][;answerMs=<ms>]
 *
 * kind: `crash` (throws), `exit` (the thread exits) or `hang` (stops answering); when: `open`
 * (while opening) or a number of batches written first; writers: how many writers in a row
 * break (default 1; the ones after work); answerMs: how long an unanswered write is waited for
 * (default 60 s; an open, at least 30 s). E.g. `crash@3`, `hang@2;answerMs=1500`, `crash@open*9`.
 */
export interface WriterFault {
  kind: 'crash' | 'exit' | 'hang'
  at: 'open' | number
}

export interface WriterFaultPlan {
  fault: WriterFault
  writers: number
  answerMs?: number
}

const FORMAT = /^(crash|exit|hang)@(open|\d+)(?:\*(\d+))?(?:;answerMs=(\d+))?$/

export function parseWriterFault(spec: string | undefined): WriterFaultPlan | null {
  if (!spec) return null
  const m = FORMAT.exec(spec.trim())
  if (!m) throw new Error(`SHORTLINK_TEST_WRITER_FAULT: expected <crash|exit|hang>@<open|N>[*writers][;answerMs=ms], got '${spec}'`)
  return {
    fault: { kind: m[1] as WriterFault['kind'], at: m[2] === 'open' ? 'open' : Number(m[2]) },
    writers: m[3] ? Number(m[3]) : 1,
    answerMs: m[4] ? Number(m[4]) : undefined,
  }
}
