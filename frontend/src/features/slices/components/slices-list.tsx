import { useMemo, useState } from 'react';
import { Link } from 'react-router';

import { useLinkAnalyses } from '@/api/get-link-analysis';
import { useLinks } from '@/api/get-links';
import { useSlices, type SliceFilters } from '@/api/get-slices';
import { Field } from '@/components/ui/field';
import { QueryView } from '@/components/ui/query-view';
import { SortableHeader, sortRows, type SortState } from '@/components/ui/sortable-header';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import type { SlicePublic, SliceState } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';
import { useDebouncedValue } from '@/lib/use-debounced-value';

import { SliceHealthBadge } from './slice-health';
import { SLICE_STATES, SliceStateBadge, sliceStateLabel } from './slice-state-badge';
import { healthOf, type SliceHealth } from './use-slice-bounds';

type SortKey = 'name' | 'state' | 'priority' | 'rate' | 'target' | 'health' | 'links';

const HEALTH_ORDER = { bad: 0, unknown: 1, ok: 2 } as const;

export function SlicesList({ emptyAction }: { emptyAction?: React.ReactNode }) {
  const [search, setSearch] = useState('');
  const [state, setState] = useState<SliceState | ''>('');
  const [priority, setPriority] = useState('');
  const [linkId, setLinkId] = useState('');
  const [sort, setSort] = useState<SortState<SortKey>>({ key: 'name', direction: 'asc' });
  const q = useDebouncedValue(search.trim(), 250);

  const filters: SliceFilters = {};
  if (q) filters.q = q;
  if (state) filters.state = state;
  if (priority) filters.priority = Number(priority);
  if (linkId) filters.link_id = Number(linkId);
  const filtered = Object.keys(filters).length > 0;

  const slices = useSlices(filters);
  const links = useLinks();
  const linkIds = useMemo(() => (links.data?.data ?? []).map((l) => l.id), [links.data]);
  const analyses = useLinkAnalyses(linkIds);

  const rows = useMemo(() => {
    const list = slices.data?.data ?? [];
    const withHealth = list.map((slice) => ({ slice, health: healthOf(slice, analyses.byLink) }));
    return sortRows(withHealth, sort, ({ slice, health }: { slice: SlicePublic; health: SliceHealth }, key) => {
      switch (key) {
        case 'name':
          return slice.name;
        case 'state':
          return slice.state;
        case 'priority':
          return slice.priority;
        case 'rate':
          return slice.rate_bps;
        case 'target':
          return slice.delay_target_s;
        case 'links':
          return slice.link_ids.length;
        case 'health':
          return HEALTH_ORDER[health.status] * 1e6 + (health.slackS ?? -1);
      }
    });
  }, [slices.data, analyses.byLink, sort]);

  const linkName = new Map((links.data?.data ?? []).map((l) => [l.id, l.name] as const));

  return (
    <div>
      <div className="toolbar" role="search">
        <Field label="Search by name" className="grow">
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="e.g. enterprise" />
        </Field>
        <Field label="State">
          <select value={state} onChange={(e) => setState(e.target.value as SliceState | '')}>
            <option value="">Any state</option>
            {SLICE_STATES.map((s) => (
              <option key={s} value={s}>
                {sliceStateLabel(s)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Priority">
          <select value={priority} onChange={(e) => setPriority(e.target.value)}>
            <option value="">Any priority</option>
            {[7, 6, 5, 4, 3, 2, 1, 0].map((p) => (
              <option key={p} value={String(p)}>
                {p}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Link">
          <select value={linkId} onChange={(e) => setLinkId(e.target.value)}>
            <option value="">Any link</option>
            {(links.data?.data ?? []).map((l) => (
              <option key={l.id} value={String(l.id)}>
                {l.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <QueryView
        query={slices}
        what="slices"
        isEmpty={(data) => data.data.length === 0}
        empty={
          filtered ? (
            <StateView kind="empty" title="No slice matches these filters" detail="Clear a filter to see more." />
          ) : (
            <StateView kind="empty" title="No slices yet" detail="A slice is a rate, a burst, a delay target and a priority on the links it crosses." action={emptyAction} />
          )
        }
      >
        {(data) => (
          <div className="table-wrap">
            <table className="table" aria-label="Slices">
              <thead>
                <tr>
                  <SortableHeader label="Name" sortKey="name" sort={sort} onSort={setSort} />
                  <SortableHeader label="State" sortKey="state" sort={sort} onSort={setSort} />
                  <SortableHeader label="Health" sortKey="health" sort={sort} onSort={setSort} />
                  <SortableHeader label="Prio" sortKey="priority" sort={sort} onSort={setSort} numeric />
                  <SortableHeader label="Rate" sortKey="rate" sort={sort} onSort={setSort} numeric />
                  <SortableHeader label="Target" sortKey="target" sort={sort} onSort={setSort} numeric />
                  <SortableHeader label="Links" sortKey="links" sort={sort} onSort={setSort} />
                </tr>
              </thead>
              <tbody>
                {rows.map(({ slice, health }) => (
                  <tr key={slice.id}>
                    <td>
                      <Link to={paths.slice.href(slice.id)}>{slice.name}</Link>
                    </td>
                    <td>
                      <SliceStateBadge state={slice.state} />
                    </td>
                    <td>
                      <SliceHealthBadge health={health} />
                    </td>
                    <td className="num">{slice.priority}</td>
                    <td className="num">{formatRate(slice.rate_bps)}</td>
                    <td className="num">{formatDelay(slice.delay_target_s)}</td>
                    <td>
                      {slice.link_ids.map((id, i) => (
                        <span key={id}>
                          {i > 0 && ', '}
                          <Link to={paths.link.href(id)}>{linkName.get(id) ?? `link ${id}`}</Link>
                        </span>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {data.count > data.data.length && (
              <p className="muted small" style={{ marginTop: 8 }}>
                Showing {data.data.length} of {data.count} slices; narrow the filters to see the others.
              </p>
            )}
          </div>
        )}
      </QueryView>
    </div>
  );
}
