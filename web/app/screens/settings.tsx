import type { ScreenProps } from '../routes'
import { Empty, Page } from '../ui'

// Placeholder until this screen lands; replaced by its own commit.
export function SettingsScreen(_: ScreenProps) {
  return (
    <Page title="SettingsScreen">
      <Empty title="Not built yet" />
    </Page>
  )
}
