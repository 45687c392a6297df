/**
 * Decodes uploaded QR images on their own thread: a 3000 px photo is ~120 ms of
 * synchronous wasm that would otherwise stall every redirect. The pixel budget is
 * checked again here, so nothing reaches the decoder unchecked.
 */
import { decodeImageFile } from './qr.decode'
import { answerJobs } from './qr.job-worker'

answerJobs((bytes: Uint8Array) => decodeImageFile(bytes))
