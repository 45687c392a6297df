/** Which webhooks get which events: the fan-out's rule, free of the store (contract: "Webhooks and live events"). */
import { isLinkEvent } from '../events'
import type { EventRow, HookTarget, Matcher } from './webhooks.store'

/** A webhook's stored JSON columns, parsed once per fan-out round. */
interface ParsedHook {
  hook: HookTarget
  events: Set<string>
  linkIds: string[]
  tagIds: string[]
}

/**
 * Whether a webhook gets an event: a type it subscribed to, created after the webhook, in its
 * owner's scope (an admin's: everything; anyone else's: events of their own links), and for
 * link events, one of its links or tags when it names any. Test events are delivered apart.
 */
function wants(p: ParsedHook, e: EventRow): boolean {
  if (e.webhook_id !== null || !p.events.has(e.type) || e.created_at < p.hook.created_at) return false
  if (p.hook.role !== 'admin' && e.user_id !== p.hook.user_id) return false
  if (!isLinkEvent(e.type) || (p.linkIds.length === 0 && p.tagIds.length === 0)) return true
  if (e.link_id !== null && p.linkIds.includes(e.link_id)) return true
  const tags = e.tag_ids ? (JSON.parse(e.tag_ids) as string[]) : []
  return p.tagIds.some((t) => tags.includes(t))
}

export const matchEvents: Matcher = (events, hooks) => {
  const parsed = hooks.map((hook) => ({
    hook,
    events: new Set(JSON.parse(hook.events) as string[]),
    linkIds: JSON.parse(hook.link_ids) as string[],
    tagIds: JSON.parse(hook.tag_ids) as string[],
  }))
  const pairs: [string, EventRow][] = []
  for (const e of events) for (const p of parsed) if (wants(p, e)) pairs.push([p.hook.id, e])
  return pairs
}
