import type { ScreenProps } from '../routes'
import { Empty, Page } from '../ui'

// Placeholder until this screen lands; replaced by its own commit.
export function DomainsScreen(_: ScreenProps) {
  return (
    <Page title="DomainsScreen">
      <Empty title="Not built yet" />
    </Page>
  )
}
