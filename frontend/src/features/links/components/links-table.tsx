import { useMemo } from 'react';
import { Link } from 'react-router';

import { useLinkAnalyses } from '@/api/get-link-analysis';
import { useLinks, type LinkFilters } from '@/api/get-links';
import { useSwitches } from '@/api/get-switches';
import { Meter } from '@/components/ui/meter';
import { QueryView } from '@/components/ui/query-view';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { MODEL_LABELS, worstSlack } from '@/lib/analysis';
import { formatDelay, formatRate } from '@/lib/format';

/**
 * Links with their capacity, utilisation by rate limits, number of slices and worst slack
 * (from each link's analysis under its own model).
 */
export function LinksTable({ filters = {}, emptyAction }: { filters?: LinkFilters; emptyAction?: React.ReactNode }) {
  const links = useLinks(filters);
  const switches = useSwitches();
  const ids = useMemo(() => (links.data?.data ?? []).map((l) => l.id), [links.data]);
  const analyses = useLinkAnalyses(ids);
  const switchName = new Map((switches.data?.data ?? []).map((s) => [s.id, s.name] as const));
  return (
    <QueryView
      query={links}
      what="links"
      isEmpty={(d) => d.data.length === 0}
      empty={<StateView kind="empty" title="No links yet" detail="A link is a switch's egress port with a capacity and priority queues." action={emptyAction} />}
    >
      {(data) => (
        <div className="table-wrap">
          <table className="table" aria-label="Links">
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col">Switch / port</th>
                <th scope="col" className="num">Capacity</th>
                <th scope="col" style={{ width: 210 }}>Utilisation by rate limits</th>
                <th scope="col" className="num">Slices</th>
                <th scope="col" className="num">Worst slack</th>
                <th scope="col">Model</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((link) => {
                const analysis = analyses.byLink.get(link.id);
                const utilisation = analysis ? analysis.total_rate_bps / link.capacity_bps : undefined;
                const slack = analysis ? worstSlack(analysis) : undefined;
                return (
                  <tr key={link.id} className={analysis && !analysis.admissible ? 'row-bad' : ''}>
                    <td>
                      <Link to={paths.link.href(link.id)}>{link.name}</Link>
                    </td>
                    <td>
                      <Link to={paths.switch.href(link.switch_id)}>{switchName.get(link.switch_id) ?? `switch ${link.switch_id}`}</Link>
                      <span className="muted"> · port {link.port}</span>
                    </td>
                    <td className="num">{formatRate(link.capacity_bps)}</td>
                    <td>
                      {utilisation === undefined ? (
                        <span className="muted">…</span>
                      ) : (
                        <div className="meter-cell">
                          <Meter value={utilisation} label={`Utilisation of ${link.name}`} />
                          <span className="num nowrap small">{(utilisation * 100).toFixed(1)} %</span>
                        </div>
                      )}
                    </td>
                    <td className="num">{analysis ? analysis.slices.length : '…'}</td>
                    <td className="num">
                      {analysis === undefined ? (
                        '…'
                      ) : slack === undefined ? (
                        <span className="muted">no slices</span>
                      ) : slack === null || slack < 0 ? (
                        <span className="bound-bad">{slack === null ? 'unbounded' : `−${formatDelay(-slack)}`}</span>
                      ) : (
                        <span className="bound-ok">+{formatDelay(slack)}</span>
                      )}
                    </td>
                    <td className="small">{MODEL_LABELS[link.model]}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </QueryView>
  );
}
