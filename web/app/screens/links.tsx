import type { ScreenProps } from '../routes'
import { Empty, Page } from '../ui'

// Placeholder until this screen lands; replaced by its own commit.
export function LinksScreen(_: ScreenProps) {
  return (
    <Page title="LinksScreen">
      <Empty title="Not built yet" />
    </Page>
  )
}
