/** Every screen of the dashboard, loaded on first visit so the first load carries only the shell. */
import type { ComponentType } from 'preact'

export type ScreenProps = { params: Record<string, string>; query: URLSearchParams }
export interface Route {
  pattern: string
  load: () => Promise<ComponentType<ScreenProps>>
}

export const ROUTES: Route[] = [
  { pattern: '/links', load: () => import('./screens/links').then((m) => m.LinksScreen) },
  { pattern: '/links/new', load: () => import('./screens/link-editor').then((m) => m.LinkEditorScreen) },
  { pattern: '/links/import', load: () => import('./screens/import').then((m) => m.ImportScreen) },
  { pattern: '/links/:id', load: () => import('./screens/link-editor').then((m) => m.LinkEditorScreen) },
  { pattern: '/links/:id/qr', load: () => import('./screens/qr-designer').then((m) => m.QrDesignerScreen) },
  { pattern: '/links/:id/stats', load: () => import('./screens/stats').then((m) => m.StatsScreen) },
  { pattern: '/links/:id/live', load: () => import('./screens/live').then((m) => m.LiveScreen) },
  { pattern: '/live', load: () => import('./screens/live').then((m) => m.LiveScreen) },
  { pattern: '/qr', load: () => import('./screens/qr-designer').then((m) => m.QrDesignerScreen) },
  { pattern: '/print', load: () => import('./screens/print-runs').then((m) => m.PrintRunsScreen) },
  { pattern: '/stats', load: () => import('./screens/stats').then((m) => m.StatsScreen) },
  { pattern: '/domains', load: () => import('./screens/domains').then((m) => m.DomainsScreen) },
  { pattern: '/files', load: () => import('./screens/library').then((m) => m.FilesScreen) },
  { pattern: '/tags', load: () => import('./screens/library').then((m) => m.TagsScreen) },
  { pattern: '/templates', load: () => import('./screens/library').then((m) => m.TemplatesScreen) },
  { pattern: '/settings', load: () => import('./screens/settings').then((m) => m.SettingsScreen) },
]

export const NAV: { href: string; label: string }[] = [
  { href: '/links', label: 'Links' },
  { href: '/stats', label: 'Statistics' },
  { href: '/live', label: 'Live' },
  { href: '/qr', label: 'QR designer' },
  { href: '/domains', label: 'Domains' },
  { href: '/files', label: 'Files' },
  { href: '/tags', label: 'Tags' },
  { href: '/templates', label: 'Templates' },
  { href: '/settings', label: 'Settings' },
]
