/** Where a redirect sent its visitor, without the click id a link tracking conversions appends, and that id (`sl_id`). */
export function landingOf(location: string | null): { url: string; clickId: string | null } {
  const u = new URL(location!)
  const clickId = u.searchParams.get('sl_id')
  u.searchParams.delete('sl_id')
  return { url: u.toString(), clickId }
}
