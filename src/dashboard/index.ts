/** The dashboard at `/app/`: the web app's files (built from `web/app`, embedded in the binary) and how they are served. Other modules import this file only. */
export { createDashboard, type Dashboard } from './dashboard.handler'
export { type AssetPack, buildAssetPack, encodePack } from './dashboard.pack'
