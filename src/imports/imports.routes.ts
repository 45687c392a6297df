import { rmSync } from 'node:fs'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parameterError } from '../shared'
import { IMPORT_SOURCES, ImportIdParams, ImportRecord, type ImportSourceName, MAX_LISTED_ERRORS, StartImportForm } from './imports.schema'
import type { ImportService } from './imports.service'
import { receiveUpload } from './imports.upload'

const errors = errorResponses(400, 401, 403, 404, 422, 429, 503)

/** POST /imports waits this long for the import to end, so a small file's answer is its result. */
const ANSWER_WITHIN_MS = 1000

export function importRoutes({ imports, maxBytes }: { imports: ImportService; maxBytes: number }) {
  return new Elysia({ name: 'imports', normalize: false })
    .post(
      '/imports',
      async ({ request, set }) => {
        const caller = callerOf(request)
        const path = imports.uploadPath()
        const upload = await receiveUpload(request, path, maxBytes)
        try {
          const { source, domain, dryRun } = upload.fields
          if (source === undefined) throw parameterError(`'source' is required in body`)
          if (!(IMPORT_SOURCES as readonly string[]).includes(source)) throw parameterError(`'source' must be one of ${IMPORT_SOURCES.join(', ')}`)
          if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false') throw parameterError(`'dryRun' must be true or false`)
          if (!upload.received) throw parameterError(`'file' is required in body`)
          const { record, done } = await imports.start(caller, {
            source: source as ImportSourceName,
            path,
            fileName: upload.fileName,
            domain,
            dryRun: dryRun === 'true',
            removeWhenDone: true,
          })
          await Promise.race([done, Bun.sleep(ANSWER_WITHIN_MS)])
          set.status = 202
          return await imports.get(caller, record.id)
        } catch (e) {
          rmSync(path, { force: true })
          throw e
        }
      },
      {
        parse: 'none',
        response: { 202: ImportRecord, ...errors },
        detail: {
          tags: ['Imports'],
          summary: "Import links from another service's export",
          description:
            'multipart/form-data: `source`, `file`, optional `domain` and `dryRun`. The file is received to disk (up to config `[imports] maxBytes`, ' +
            'else 400) and checked (encoding, CSV or JSON, the columns the source exports; else 422 naming what was expected), then imported in the ' +
            `background into the caller's account; the answer (202) comes when it ends or after ${ANSWER_WITHIN_MS / 1000} s, whichever is first: poll ` +
            'GET /imports/{id} while `status` is `running` (the counts move). Each row becomes a link through the same rules as POST /links/{type} ' +
            "(tags are the caller's own, created by name when missing; a key reserved or used by someone else fails its row). The export's " +
            "creation date becomes `createdAt`; its click total becomes the link's `importedClicks` (never `clicks`, never statistics). " +
            'A row matching a link of the caller (same domain and key and destination; a keyless row: same type and destination) is skipped, or ' +
            'updated with what the file adds, so importing the same file again creates nothing. With `dryRun=true` nothing is written but the ' +
            `import's record. Rows that fail are counted in \`failed\` and the first ${MAX_LISTED_ERRORS} are listed in \`errors\` with their row. ` +
            'A file that cannot be read on (a record over 64 KiB, a quote never closed, broken JSON) ends the import `failed` at that row; the rows ' +
            'before it stay. An import whose server stops is marked `failed` (at once on a clean stop, within a minute after a crash).',
          requestBody: { required: true, content: { 'multipart/form-data': { schema: { ...StartImportForm, required: ['source', 'file'] } } } },
        },
      },
    )
    .get('/imports/:id', ({ params, request }) => imports.get(callerOf(request), params.id), {
      params: ImportIdParams,
      response: { 200: ImportRecord, ...errors },
      detail: {
        tags: ['Imports'],
        summary: 'An import and its progress',
        description: "The import's record; admins see every user's imports, members their own.",
      },
    })
}
