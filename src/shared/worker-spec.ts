/**
 * How to name a worker entrypoint given its path under src/: in a compiled binary each
 * worker is an extra entrypoint addressed from the bundle root (src/); from source, a
 * file URL. scripts/build.ts lists the same paths.
 */
export function workerSpec(pathUnderSrc: string): string {
  return import.meta.url.includes('$bunfs') ? `./${pathUnderSrc}` : new URL(`../${pathUnderSrc}`, import.meta.url).href
}

/** The worker entrypoints the build must include, by path under src/. */
export const WORKER_ENTRYPOINTS = [
  'stats/click-writer.worker.ts',
  'qr/qr.scan.worker.ts',
  'qr/qr.image.worker.ts',
  'backup/backup.worker.ts',
  'webhooks/webhooks.dispatch.worker.ts',
]
