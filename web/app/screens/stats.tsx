import type { ScreenProps } from '../routes'
import { Empty, Page } from '../ui'

// Placeholder until this screen lands; replaced by its own commit.
export function StatsScreen(_: ScreenProps) {
  return (
    <Page title="StatsScreen">
      <Empty title="Not built yet" />
    </Page>
  )
}
