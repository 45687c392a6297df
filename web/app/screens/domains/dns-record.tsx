/** The exact DNS record a domain needs, ready to copy, and what to do for an apex domain. */
import { CopyButton } from '../../ui'
import { cnameRecordLine, type DomainRecord, looksLikeApex, relativeName } from './domain'

export function DnsRecord({ domain }: { domain: DomainRecord }) {
  const apex = looksLikeApex(domain.slug)
  const line = cnameRecordLine(domain)
  return (
    <section class="domains-dns" aria-labelledby={`dns-${domain.slug}`}>
      <h3 id={`dns-${domain.slug}`}>DNS record to create</h3>
      {apex ? (
        <p class="domains-note">
          <strong>{domain.slug}</strong> looks like a root domain. Most DNS providers do not allow a CNAME there: use their <strong>ALIAS</strong>,{' '}
          <strong>ANAME</strong> or <strong>CNAME flattening</strong> record with the value below, or create <strong>A</strong> and <strong>AAAA</strong>{' '}
          records with the same addresses as <span class="mono">{domain.cnameTarget}</span>. A subdomain such as <span class="mono">go.{domain.slug}</span> is
          simpler.
        </p>
      ) : (
        <p class="domains-note">At the company where you bought the domain (its DNS settings), add this record:</p>
      )}
      <dl class="domains-record">
        <div>
          <dt>Type</dt>
          <dd class="mono">CNAME</dd>
        </div>
        <div>
          <dt>Name</dt>
          <dd>
            <span class="mono">{domain.slug}</span>
            {!apex ? <span class="muted"> (some providers want only “{relativeName(domain.slug)}”)</span> : null}
          </dd>
        </div>
        <div>
          <dt>Value (points to)</dt>
          <dd class="domains-copyable">
            <span class="mono" data-testid="cname-target">
              {domain.cnameTarget}
            </span>
            <CopyButton text={domain.cnameTarget} label="Copy value" />
          </dd>
        </div>
      </dl>
      <p class="domains-zone">
        <span class="muted">As a zone-file line: </span>
        <code class="mono" data-testid="cname-record">
          {line}
        </code>{' '}
        <CopyButton text={line} label="Copy record" />
      </p>
      <p class="hint">DNS changes can take from a few minutes to a few hours to be seen everywhere.</p>
    </section>
  )
}
