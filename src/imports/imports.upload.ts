/**
 * The multipart body of POST /imports, streamed: the `file` part goes straight to disk (at most
 * `maxBytes`), the few small fields are kept; nothing of the file is held in memory. @fastify/busboy
 * parses the stream (limits on parts, fields and their sizes), so a hostile body costs at most
 * the limits.
 */
import { createWriteStream, rmSync } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import Busboy from '@fastify/busboy'
import { AppError, badRequest, parameterError } from '../shared'

const FIELDS = new Set(['source', 'domain', 'dryRun'])
const MAX_FIELD_BYTES = 1024

export interface Upload {
  fields: Record<string, string>
  /** The file part's name as the client sent it, or null when there was no file part. */
  fileName: string | null
  received: boolean
}

export async function receiveUpload(request: Request, path: string, maxBytes: number): Promise<Upload> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data/i.test(contentType))
    throw badRequest(`unsupported content type '${contentType.split(';')[0] || '(none)'}': send multipart/form-data with the fields source and file`)
  if (!request.body) throw badRequest('the request has no body: send multipart/form-data with the fields source and file')
  try {
    return await new Promise<Upload>((resolve, reject) => {
      let bb: ReturnType<typeof Busboy>
      try {
        bb = Busboy({
          headers: { 'content-type': contentType },
          limits: {
            fields: FIELDS.size,
            fieldSize: MAX_FIELD_BYTES,
            fieldNameSize: 100,
            files: 1,
            fileSize: maxBytes,
            parts: FIELDS.size + 1,
            headerPairs: 20,
          },
        })
      } catch {
        return reject(badRequest('the multipart/form-data body has no boundary'))
      }
      const fields: Record<string, string> = {}
      let fileName: string | null = null
      let problem: AppError | null = null
      let writing: Promise<void> = Promise.resolve()
      const refuse = (e: AppError) => {
        problem ??= e
      }
      bb.on('file', (name, stream, filename) => {
        if (name !== 'file') {
          refuse(parameterError(`unknown field '${name.slice(0, 100)}' in body (the file goes in 'file')`))
          stream.resume()
          return
        }
        fileName = filename ? filename.slice(0, 255) : 'upload'
        stream.on('limit', () => refuse(badRequest(`'file' is larger than ${maxBytes} bytes (config [imports] maxBytes); split the export`)))
        writing = pipeline(stream, createWriteStream(path)).catch((e: NodeJS.ErrnoException) => {
          refuse(
            e.code === 'ENOSPC'
              ? new AppError('service_unavailable', 'the disk is full; the upload was not kept', { 'Retry-After': '60' })
              : badRequest('the upload broke off before the end'),
          )
        })
      })
      bb.on('field', (name, value, _nameTruncated, valueTruncated) => {
        if (!FIELDS.has(name)) refuse(parameterError(`unknown field '${name.slice(0, 100)}' in body`))
        else if (valueTruncated) refuse(parameterError(`'${name}' is longer than ${MAX_FIELD_BYTES} bytes`))
        else fields[name] = value
      })
      bb.on('filesLimit', () => refuse(parameterError(`'file' may be sent once`)))
      bb.on('fieldsLimit', () => refuse(parameterError('the body has more fields than source, domain, dryRun and file')))
      bb.on('partsLimit', () => refuse(parameterError('the body has more parts than source, domain, dryRun and file')))
      bb.on('error', () => reject(problem ?? badRequest('the multipart/form-data body could not be parsed')))
      bb.on('finish', () => {
        writing.then(() => (problem ? reject(problem) : resolve({ fields, fileName, received: fileName !== null })))
      })
      const body = Readable.fromWeb(request.body as unknown as import('node:stream/web').ReadableStream<Uint8Array>)
      body.on('error', () => reject(problem ?? badRequest('the upload broke off before the end')))
      body.pipe(bb)
    })
  } catch (e) {
    rmSync(path, { force: true })
    throw e
  }
}
