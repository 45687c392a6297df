import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { badRequest, parseQuery, queryParameters } from '../shared'
import { contentResponse } from './files.content'
import { ContentQuery, FileIdParams, FileRecordSchema, ListFilesQuery, UpdateFileBody, UploadFileBody } from './files.schema'
import type { FileService } from './files.service'
import { ALLOWED_TYPES } from './files.sniff'
import type { FileStorePort } from './files.store'

const errors = errorResponses(400, 401, 403, 404, 410, 422, 429)
const TYPES = Object.entries(ALLOWED_TYPES)
  .map(([ext, mime]) => `${ext} (${mime})`)
  .join(', ')

/** The multipart body of an upload; the envelope has already bounded its size. */
async function readUpload(request: Request): Promise<{ file: unknown; name?: string }> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'multipart/form-data') throw badRequest(`unsupported content type '${type || '(none)'}': upload with multipart/form-data and the field 'file'`)
  let form: Awaited<ReturnType<Request['formData']>>
  try {
    form = await request.formData()
  } catch {
    throw badRequest('the multipart/form-data body could not be parsed')
  }
  const name = form.get('name')
  return { file: form.get('file'), name: typeof name === 'string' ? name : undefined }
}

/** Over either store: SQLite answers at once, PostgreSQL with promises (awaited here). */
export function fileRoutes({ files, maxBytes }: { files: FileService<FileStorePort>; maxBytes: number }) {
  return new Elysia({ name: 'files', normalize: false })
    .post(
      '/files',
      async ({ request, set }) => {
        const { file, name } = await readUpload(request)
        const record = await files.create(callerOf(request), file, name)
        set.status = 201
        return record
      },
      {
        parse: 'none',
        response: { 201: FileRecordSchema, ...errors },
        detail: {
          tags: ['Files'],
          summary: 'Upload a file',
          description:
            `multipart/form-data with the field \`file\` (and optionally \`name\`). Responds 201 with the file record. ` +
            `The type is detected from the content (magic bytes), never from the name; allowed: ${TYPES}; anything else is 422. ` +
            `Files over ${maxBytes} bytes (config \`[files] maxBytes\`) are 400 bad_request. ` +
            "On SQLite equal content is stored once on disk; on PostgreSQL the bytes are kept in the file's row.",
          requestBody: {
            required: true,
            content: { 'multipart/form-data': { schema: { ...UploadFileBody, required: ['file'] } } },
          },
        },
      },
    )
    .get(
      '/files',
      async ({ request, set }) => {
        const q = parseQuery(ListFilesQuery, new URL(request.url).searchParams)
        const { files: list, total } = await files.list(callerOf(request), q)
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(FileRecordSchema), ...errors },
        detail: {
          tags: ['Files'],
          summary: 'List files',
          description:
            "Members see their own files, admins everyone's; archived files only with `includeArchived`. `X-Total-Count` holds the number of matches before paging.",
          parameters: queryParameters(ListFilesQuery),
        },
      },
    )
    .get('/files/:id', ({ params, request }) => files.getOwned(callerOf(request), params.id), {
      params: FileIdParams,
      response: { 200: FileRecordSchema, ...errors },
      detail: { tags: ['Files'], summary: 'Get a file record', description: '410 record_gone once the file was deleted.' },
    })
    .get(
      '/files/:id/content',
      async ({ params, request }) => {
        const q = parseQuery(ContentQuery, new URL(request.url).searchParams)
        return contentResponse(request, await files.content(callerOf(request), params.id), { download: q.download })
      },
      {
        params: FileIdParams,
        detail: {
          tags: ['Files'],
          summary: "Download a file's bytes",
          description:
            'Streams the bytes with the detected Content-Type and a strong ETag (304 on If-None-Match). A single `Range: bytes=…` ' +
            'answers 206 with Content-Range; a range that starts past the end, is reversed or malformed answers 416 with ' +
            '`Content-Range: bytes */<size>`; several ranges at once get the whole file (200). `download=true` sets ' +
            'Content-Disposition: attachment. SVG is served with a sandboxing Content-Security-Policy.',
          parameters: queryParameters(ContentQuery),
          responses: {
            200: { description: 'The bytes.' },
            206: { description: 'The requested byte range.' },
            304: { description: 'Not modified.' },
            416: { description: 'Range not satisfiable.' },
          },
        },
      },
    )
    .patch('/files/:id', ({ params, body, request }) => files.update(callerOf(request), params.id, body), {
      params: FileIdParams,
      body: UpdateFileBody,
      response: { 200: FileRecordSchema, ...errors },
      detail: { tags: ['Files'], summary: 'Rename or (un)archive a file', description: 'Archived files leave the default list; links keep showing them.' },
    })
    .delete('/files/:id', ({ params, request }) => files.remove(callerOf(request), params.id), {
      params: FileIdParams,
      response: { 200: t.Object({ id: t.String() }), ...errors },
      detail: {
        tags: ['Files'],
        summary: 'Delete a file',
        description:
          'Answers `{ id }`. A file that a live (not deleted) link uses cannot be deleted: 422 parameter_error until that link is ' +
          'deleted or changed (archive the file instead to hide it). Afterwards the id answers 410 record_gone; the bytes are ' +
          'removed with it (on SQLite, from disk once no other file record has the same content).',
      },
    })
}
