/** QR codes: design rules, rendering (SVG/PNG) with a scan check, decoding (POST /qr/scan), user images (fetched or uploaded) within limits, QR templates. Other modules import this file only. */
export { createDesignFiles } from './qr.files'
export { qrRoutes } from './qr.routes'
export { createQrService, type QrService } from './qr.service'
export { templateRoutes } from './qr.templates.routes'
export { createTemplateService, type TemplateService } from './qr.templates.service'
export { createTemplateStore, type TemplateStorePort } from './qr.templates.store'
export { createPgTemplateStore } from './qr.templates.store.pg'
