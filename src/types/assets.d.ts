// Files imported `with { type: 'file' }` resolve to a path inside the compiled binary.
declare module '*.css' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module '*.wasm' {
  const path: string
  export default path
}
declare module '*.woff2' {
  const path: string
  export default path
}
declare module '*.mmdb' {
  const path: string
  export default path
}

/** fontkit ships no types; qr.pdf.ts types the little it reads. */
declare module 'fontkit' {
  export function create(buffer: Uint8Array): unknown
}

declare module '*.so' {
  const path: string
  export default path
}
