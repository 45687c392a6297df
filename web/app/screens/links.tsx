/**
 * The caller's links: search, filters, sort and paging kept in the address bar, served page by
 * page by the API (never all at once); bulk tags, archive and delete; CSV export of every match.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { apiUrl, errorText } from '../api'
import { downloadCsv } from '../csv'
import { Link, setQuery } from '../router'
import type { ScreenProps } from '../routes'
import { canWrite, isAdmin, useSession } from '../session'
import { Button, CopyButton, Empty, ErrorBox, Field, Loading, Modal, Page, Pager, toast, useResource } from '../ui'
import { changeTags, deleteLinks, setArchived } from './links/bulk'
import { exportLinks } from './links/export'
import { BrokenBadge, HEALTH_CHOICES, HEALTH_LABELS } from './links/health'
import {
  fetchDomains,
  fetchTags,
  fetchUsers,
  filtersFrom,
  LINK_TYPES,
  type LinkFilters,
  type LinkRecord,
  listLinks,
  listQuery,
  PAGE_SIZES,
  relativeTime,
  SORTS,
  type Tag,
} from './links/model'

const SEARCH_DELAY_MS = 300

export function LinksScreen({ query }: ScreenProps) {
  const session = useSession()
  const writer = canWrite(session)
  const admin = isAdmin(session)
  const filters = filtersFrom(query)
  const apiQuery = listQuery(filters)
  const listKey = JSON.stringify([apiQuery, filters.page, filters.pageSize])

  const list = useResource((signal) => listLinks(apiQuery, filters.page, filters.pageSize, signal), [listKey])
  const tags = useResource((signal) => fetchTags(signal), [])
  const domains = useResource((signal) => fetchDomains(signal), [])
  const users = useResource((signal) => (admin ? fetchUsers(signal) : Promise.resolve([])), [admin])
  const tagById = useMemo(() => new Map((tags.data ?? []).map((t) => [t.id, t])), [tags.data])

  const [selected, setSelected] = useState<Set<string>>(new Set())
  // A new page or filter shows other links: a selection of links no longer shown would surprise.
  useEffect(() => setSelected(new Set()), [listKey])

  const filtered = Boolean(filters.search || filters.domain || filters.type || filters.tag || filters.user || filters.health)
  const page = list.data
  const links = page?.links ?? []
  const selectedLinks = links.filter((l) => selected.has(l.id))

  const actions = (
    <>
      <ExportButton filters={filters} tags={tags.data ?? []} total={page?.total ?? null} />
      {page && page.total > 0 ? (
        <Link href={`/print?${query.toString()}`} class="btn">
          Print run
        </Link>
      ) : null}
      {writer ? (
        <>
          <Link href="/links/import" class="btn">
            Import
          </Link>
          <Link href="/links/new" class="btn btn-primary">
            New link
          </Link>
        </>
      ) : null}
    </>
  )

  return (
    <Page title="Links" actions={actions}>
      <Filters
        filters={filters}
        tags={tags.data ?? []}
        domains={(domains.data ?? []).map((d) => d.slug)}
        users={admin ? (users.data ?? []).map((u) => u.id) : null}
      />
      {writer && selectedLinks.length > 0 ? (
        <BulkBar
          links={selectedLinks}
          tags={tags.data ?? []}
          onDone={() => {
            setSelected(new Set())
            list.reload()
          }}
          onClear={() => setSelected(new Set())}
        />
      ) : null}
      {list.error && !page ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !page ? (
        <Loading label="Loading links…" />
      ) : page.total === 0 ? (
        filtered || filters.page > 1 ? (
          <Empty title="No links match these filters">
            <Button onClick={() => setQuery({ q: null, domain: null, type: null, tag: null, user: null, health: null, page: null })}>Clear filters</Button>
          </Empty>
        ) : (
          <Empty title={writer ? 'No links yet' : 'No links to show'}>
            {writer ? (
              <>
                <p>Create your first short link and its QR code in a few seconds, or bring your list in from a spreadsheet.</p>
                <p class="links-empty-actions">
                  <Link href="/links/new" class="btn btn-primary">
                    Create a link
                  </Link>
                  <Link href="/links/import" class="btn">
                    Import links
                  </Link>
                </p>
              </>
            ) : (
              <p>Links shared with you will appear here.</p>
            )}
          </Empty>
        )
      ) : (
        <>
          {list.error ? <ErrorBox error={list.error} retry={list.reload} /> : null}
          <LinksTable links={links} tagById={tagById} selectable={writer} selected={selected} setSelected={setSelected} busy={list.loading} />
          <div class="links-foot">
            <Field label="Per page">
              {(p) => (
                <select {...p} value={filters.pageSize} onChange={(e) => setQuery({ size: e.currentTarget.value, page: null })}>
                  {PAGE_SIZES.map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Pager page={filters.page} pageSize={filters.pageSize} total={page.total} onPage={(p) => setQuery({ page: p === 1 ? null : String(p) })} />
          </div>
        </>
      )}
    </Page>
  )
}

function Filters({ filters, tags, domains, users }: { filters: LinkFilters; tags: Tag[]; domains: string[]; users: string[] | null }) {
  const [text, setText] = useState(filters.search)
  const sent = useRef(filters.search)
  // The address bar changed under us (back, a cleared filter): show what it says.
  useEffect(() => {
    if (filters.search !== sent.current) {
      sent.current = filters.search
      setText(filters.search)
    }
  }, [filters.search])
  useEffect(() => {
    if (text === sent.current) return
    const timer = setTimeout(() => {
      sent.current = text
      setQuery({ q: text, page: null })
    }, SEARCH_DELAY_MS)
    return () => clearTimeout(timer)
  }, [text])
  const set = (name: string, value: string) => setQuery({ [name]: value, page: null })

  return (
    <form class="toolbar links-filters" aria-label="Filter links" onSubmit={(e) => e.preventDefault()}>
      <Field label="Search">
        {(p) => (
          <input
            {...p}
            type="search"
            class="links-search"
            placeholder="Slug or destination"
            maxLength={200}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Domain">
        {(p) => (
          <select {...p} value={filters.domain} onChange={(e) => set('domain', e.currentTarget.value)}>
            <option value="">All domains</option>
            {withCurrent(domains, filters.domain).map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Type">
        {(p) => (
          <select {...p} value={filters.type} onChange={(e) => set('type', e.currentTarget.value)}>
            <option value="">All types</option>
            {withCurrent([...LINK_TYPES], filters.type).map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Tag">
        {(p) => (
          <select {...p} value={filters.tag} onChange={(e) => set('tag', e.currentTarget.value)}>
            <option value="">Any tag</option>
            {tags.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {users ? (
        <Field label="Owner">
          {(p) => (
            <select {...p} value={filters.user} onChange={(e) => set('user', e.currentTarget.value)}>
              <option value="">Everyone</option>
              {withCurrent(users, filters.user).map((u) => (
                <option key={u} value={u}>
                  {u}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field label="Health">
        {(p) => (
          <select {...p} value={filters.health} onChange={(e) => set('health', e.currentTarget.value)}>
            <option value="">Any health</option>
            {HEALTH_CHOICES.map((s) => (
              <option key={s} value={s}>
                {HEALTH_LABELS[s]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Sort by">
        {(p) => (
          <select {...p} value={filters.sort} onChange={(e) => set('sort', e.currentTarget.value === 'newest' ? '' : e.currentTarget.value)}>
            {Object.entries(SORTS).map(([name, s]) => (
              <option key={name} value={name}>
                {s.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <label class="check links-archived">
        <input type="checkbox" checked={filters.archived} onChange={(e) => set('archived', e.currentTarget.checked ? '1' : '')} />
        Show archived
      </label>
    </form>
  )
}

/** A filter value from the address bar stays selectable even when the list of choices lacks it. */
const withCurrent = (values: string[], current: string) => (current && !values.includes(current) ? [current, ...values] : values)

function LinksTable({
  links,
  tagById,
  selectable,
  selected,
  setSelected,
  busy,
}: {
  links: LinkRecord[]
  tagById: Map<string, Tag>
  selectable: boolean
  selected: Set<string>
  setSelected: (s: Set<string>) => void
  busy: boolean
}) {
  const all = links.length > 0 && links.every((l) => selected.has(l.id))
  const some = !all && links.some((l) => selected.has(l.id))
  const headerBox = useRef<HTMLInputElement>(null)
  useEffect(() => {
    if (headerBox.current) headerBox.current.indeterminate = some
  }, [some])
  const toggle = (id: string) => {
    const next = new Set(selected)
    if (!next.delete(id)) next.add(id)
    setSelected(next)
  }
  return (
    <div class="table-wrap links-table" aria-busy={busy || undefined}>
      <table>
        <caption class="visually-hidden">Your links</caption>
        <thead>
          <tr>
            {selectable ? (
              <th scope="col" class="links-select">
                <input
                  ref={headerBox}
                  type="checkbox"
                  aria-label="Select all links on this page"
                  checked={all}
                  onChange={() => setSelected(all ? new Set() : new Set(links.map((l) => l.id)))}
                />
              </th>
            ) : null}
            <th scope="col" class="hide-phone">
              QR
            </th>
            <th scope="col">Short link</th>
            <th scope="col" class="hide-phone">
              Destination
            </th>
            <th scope="col" class="hide-phone">
              Type
            </th>
            <th scope="col" class="hide-phone">
              Tags
            </th>
            <th scope="col" class="num">
              Clicks
            </th>
            <th scope="col" class="hide-phone">
              Last click
            </th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {links.map((l) => (
            <LinkRow key={l.id} link={l} tagById={tagById} selectable={selectable} checked={selected.has(l.id)} onToggle={() => toggle(l.id)} />
          ))}
        </tbody>
      </table>
    </div>
  )
}

function LinkRow({
  link: l,
  tagById,
  selectable,
  checked,
  onToggle,
}: {
  link: LinkRecord
  tagById: Map<string, Tag>
  selectable: boolean
  checked: boolean
  onToggle: () => void
}) {
  const display = l.shortLink.replace(/^https?:\/\//, '')
  return (
    <tr class={checked ? 'links-row-selected' : undefined}>
      {selectable ? (
        <td class="links-select">
          <input type="checkbox" aria-label={`Select ${display}`} checked={checked} onChange={onToggle} />
        </td>
      ) : null}
      <td class="hide-phone links-qr">
        <img
          src={apiUrl(`/qr/${encodeURIComponent(l.id)}`, { width: 100 })}
          width={40}
          height={40}
          loading="lazy"
          decoding="async"
          alt={`QR code for ${display}`}
        />
      </td>
      <td class="links-short">
        <div class="links-short-line">
          <a href={l.shortLink} target="_blank" rel="noopener noreferrer" class="mono">
            {display}
          </a>
          <CopyButton text={l.shortLink} />
        </div>
        {l.archived ? <span class="badge">archived</span> : null}
        {l.hasPassword ? <span class="badge">password</span> : null}
        <BrokenBadge health={l.health} />
      </td>
      <td class="hide-phone links-dest">
        <span title={l.destination}>{l.destination}</span>
        {l.comments ? <span class="links-comment muted">{l.comments}</span> : null}
      </td>
      <td class="hide-phone">
        <span class="badge">{l.linkType}</span>
      </td>
      <td class="hide-phone">
        <ul class="links-tags" aria-label="Tags">
          {l.tags.map((id) => {
            const t = tagById.get(id)
            return (
              <li key={id} class="badge links-tag">
                <span class={`links-dot links-dot-${t?.color ?? 'gray'}`} aria-hidden="true" />
                {t?.name ?? id}
              </li>
            )
          })}
        </ul>
      </td>
      <td class="num">
        {l.clicks.toLocaleString()}
        {l.importedClicks ? (
          <small class="links-imported" title="Counted by the service this link was imported from; not part of the statistics here">
            +{l.importedClicks.toLocaleString()} imported
          </small>
        ) : null}
      </td>
      <td class="hide-phone">
        {l.lastClicked ? (
          <time dateTime={l.lastClicked} title={new Date(l.lastClicked).toLocaleString()}>
            {relativeTime(l.lastClicked)}
          </time>
        ) : (
          <span class="muted">never</span>
        )}
      </td>
      <td class="links-actions">
        <Link href={`/links/${encodeURIComponent(l.id)}`}>
          Edit<span class="visually-hidden"> {display}</span>
        </Link>
        <Link href={`/links/${encodeURIComponent(l.id)}/qr`}>
          QR<span class="visually-hidden"> code of {display}</span>
        </Link>
        <Link href={`/links/${encodeURIComponent(l.id)}/stats`}>
          Stats<span class="visually-hidden"> of {display}</span>
        </Link>
      </td>
    </tr>
  )
}

function BulkBar({ links, tags, onDone, onClear }: { links: LinkRecord[]; tags: Tag[]; onDone: () => void; onClear: () => void }) {
  const [dialog, setDialog] = useState<'add' | 'remove' | 'delete' | null>(null)
  const [busy, setBusy] = useState(false)
  const ids = links.map((l) => l.id)
  const allArchived = links.every((l) => l.archived)
  const n = links.length
  const plural = `${n} link${n === 1 ? '' : 's'}`

  const run = async (work: () => Promise<string>) => {
    setBusy(true)
    try {
      toast(await work())
      setDialog(null)
      onDone()
    } catch (e) {
      toast(errorText(e), 'error')
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="links-bulk card" aria-label="Bulk actions">
      <strong>{plural} selected</strong>
      <Button onClick={() => setDialog('add')}>Add tags</Button>
      <Button onClick={() => setDialog('remove')}>Remove tags</Button>
      <Button
        busy={busy}
        onClick={() =>
          run(async () => {
            await setArchived(ids, !allArchived)
            return `${allArchived ? 'Unarchived' : 'Archived'} ${plural}`
          })
        }
      >
        {allArchived ? 'Unarchive' : 'Archive'}
      </Button>
      <Button kind="danger" onClick={() => setDialog('delete')}>
        Delete
      </Button>
      <Link href={`/print?ids=${ids.join(',')}`} class="btn">
        Print run
      </Link>
      <Button kind="ghost" onClick={onClear}>
        Clear selection
      </Button>
      {dialog === 'add' || dialog === 'remove' ? (
        <TagsDialog
          mode={dialog}
          tags={dialog === 'remove' ? tags.filter((t) => links.some((l) => l.tags.includes(t.id))) : tags}
          busy={busy}
          onClose={() => setDialog(null)}
          onApply={(tagIds) =>
            run(async () => {
              const changed = await changeTags(links, tagIds, dialog)
              return `${dialog === 'add' ? 'Tagged' : 'Untagged'} ${changed} link${changed === 1 ? '' : 's'}`
            })
          }
        />
      ) : null}
      {dialog === 'delete' ? (
        <Modal title={`Delete ${plural}?`} onClose={() => setDialog(null)}>
          <p>
            Their short links and QR codes stop working at once, for everyone who has them. This cannot be undone. Archiving keeps them working and hides them
            from this list instead.
          </p>
          <div class="links-dialog-actions">
            <Button onClick={() => setDialog(null)}>Cancel</Button>
            <Button kind="danger" busy={busy} onClick={() => run(async () => `Deleted ${await deleteLinks(ids)} of ${plural}`)}>
              Delete {plural}
            </Button>
          </div>
        </Modal>
      ) : null}
    </section>
  )
}

function TagsDialog({
  mode,
  tags,
  busy,
  onClose,
  onApply,
}: {
  mode: 'add' | 'remove'
  tags: Tag[]
  busy: boolean
  onClose: () => void
  onApply: (tagIds: string[]) => void
}) {
  const [chosen, setChosen] = useState<Set<string>>(new Set())
  return (
    <Modal title={mode === 'add' ? 'Add tags' : 'Remove tags'} onClose={onClose}>
      {tags.length === 0 ? (
        <p>{mode === 'add' ? 'There are no tags yet; create them on the Tags page.' : 'The selected links carry no tags.'}</p>
      ) : (
        <fieldset class="links-tag-choices">
          <legend>{mode === 'add' ? 'Tags to add' : 'Tags to remove'}</legend>
          {tags.map((t) => (
            <label key={t.id} class="check">
              <input
                type="checkbox"
                checked={chosen.has(t.id)}
                onChange={() => {
                  const next = new Set(chosen)
                  if (!next.delete(t.id)) next.add(t.id)
                  setChosen(next)
                }}
              />
              <span class={`links-dot links-dot-${t.color}`} aria-hidden="true" />
              {t.name}
            </label>
          ))}
        </fieldset>
      )}
      <div class="links-dialog-actions">
        <Button onClick={onClose}>Cancel</Button>
        <Button kind="primary" busy={busy} disabled={chosen.size === 0} onClick={() => onApply([...chosen])}>
          {mode === 'add' ? 'Add' : 'Remove'}
        </Button>
      </div>
    </Modal>
  )
}

function ExportButton({ filters, tags, total }: { filters: LinkFilters; tags: Tag[]; total: number | null }) {
  const [progress, setProgress] = useState<{ done: number; total: number; controller: AbortController } | null>(null)
  const start = async () => {
    const controller = new AbortController()
    setProgress({ done: 0, total: total ?? 0, controller })
    try {
      const { csv, count } = await exportLinks(listQuery(filters), tags, (done, all) => setProgress({ done, total: all, controller }), controller.signal)
      downloadCsv(`links-${new Date().toISOString().slice(0, 10)}.csv`, csv)
      toast(`Exported ${count.toLocaleString()} link${count === 1 ? '' : 's'}`)
    } catch (e) {
      if ((e as Error).name !== 'AbortError') toast(`Export failed: ${errorText(e)}`, 'error')
    } finally {
      setProgress(null)
    }
  }
  if (!progress)
    return (
      <Button onClick={start} disabled={total === 0}>
        Export CSV
      </Button>
    )
  return (
    <div class="links-export" role="status">
      <label>
        Exporting {progress.done.toLocaleString()} of {progress.total.toLocaleString()}
        <progress class="progress" max={Math.max(progress.total, 1)} value={progress.done} />
      </label>
      <Button kind="ghost" onClick={() => progress.controller.abort()}>
        Cancel export
      </Button>
    </div>
  )
}
