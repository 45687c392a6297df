import type { ScreenProps } from '../routes'
import { Empty, Page } from '../ui'

// Placeholders until these screens land; replaced by their own commit.
export function FilesScreen(_: ScreenProps) {
  return (
    <Page title="Files">
      <Empty title="Not built yet" />
    </Page>
  )
}
export function TagsScreen(_: ScreenProps) {
  return (
    <Page title="Tags">
      <Empty title="Not built yet" />
    </Page>
  )
}
export function TemplatesScreen(_: ScreenProps) {
  return (
    <Page title="Templates">
      <Empty title="Not built yet" />
    </Page>
  )
}
