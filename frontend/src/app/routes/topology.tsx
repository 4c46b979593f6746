import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';

import { useSlice } from '@/api/get-slice';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { Notice } from '@/components/ui/notice';
import { PageHeader } from '@/components/ui/page-header';
import { QueryView } from '@/components/ui/query-view';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { useTopology } from '@/features/network/api/get-topology';
import { CableForm } from '@/features/network/components/cable-form';
import { CablesTable } from '@/features/network/components/cables-table';
import { TopologyLegend, TopologyView } from '@/features/network/components/topology-view';
import { useAuthorization } from '@/lib/auth';

const NO_LINKS: ReadonlySet<number> = new Set();

/** `?slice=ID`: that slice's id, or undefined when absent or not a positive integer. */
function sliceParam(text: string | null): number | undefined {
  const id = Number(text);
  return text !== null && Number.isInteger(id) && id > 0 ? id : undefined;
}

export function TopologyRoute() {
  const [search] = useSearchParams();
  const sliceId = sliceParam(search.get('slice'));
  const topology = useTopology();
  const slice = useSlice(sliceId ?? 0, sliceId !== undefined);
  const { can } = useAuthorization();
  const [adding, setAdding] = useState(false);
  const linkIds = slice.data?.link_ids;
  const highlight = useMemo(() => (linkIds ? new Set(linkIds) : NO_LINKS), [linkIds]);
  const add = can('operator') && !adding ? <Button variant="primary" onClick={() => setAdding(true)}>New cable</Button> : undefined;
  return (
    <div className="stack">
      <PageHeader
        title="Topology"
        description="Switches by health, cables and host ports by the live utilisation of their busiest direction; open a switch or a link from its label."
        actions={add}
      />
      {slice.data && (
        <Notice
          tone="info"
          title={`Links of slice ${slice.data.name}`}
          actions={
            <Link className="btn btn-sm" to={paths.topology.href()}>
              Show all
            </Link>
          }
        >
          <span data-testid="topology-slice">
            Highlighted: the {slice.data.link_ids.length} links <Link to={paths.slice.href(slice.data.id)}>{slice.data.name}</Link> crosses.
          </span>
        </Notice>
      )}
      {slice.isError && <Notice tone="bad" title={`Slice ${sliceId} cannot be shown`}>It does not exist, or could not be read.</Notice>}
      <QueryView query={topology} what="the topology">
        {(data) => (
          <>
            {adding && (
              <Card title="New cable">
                <CableForm topology={data} onDone={() => setAdding(false)} onCancel={() => setAdding(false)} />
              </Card>
            )}
            <Card title="Network" subtitle={<TopologyLegend />}>
              {data.switches.length === 0 ? (
                <StateView kind="empty" title="No switches yet" detail="Register switches, give them links (ports), and join ports with cables." />
              ) : (
                <TopologyView topology={data} highlightLinkIds={highlight} />
              )}
            </Card>
            <Card title="Cables" subtitle="Each cable joins a port of one switch to a port of another; each direction is that end's link, with its own capacity.">
              <CablesTable topology={data} canAct={can('operator')} />
            </Card>
          </>
        )}
      </QueryView>
    </div>
  );
}
