import { useState } from 'react';
import { Link } from 'react-router';

import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import type { Topology, TopologyCable, TopologyLink } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';
import { errorMessage } from '@/lib/problem';

import { useDeleteCable } from '../api/delete-cable';

import { CableForm } from './cable-form';

/** The cables of the network: both ends (switch and link), capacity each way, propagation. */
export function CablesTable({ topology, canAct }: { topology: Topology; canAct: boolean }) {
  const [editing, setEditing] = useState<number | null>(null);
  const remove = useDeleteCable();
  const switchName = new Map(topology.switches.map((s) => [s.id, s.name] as const));
  const links = new Map(topology.links.map((l) => [l.id, l] as const));
  if (topology.cables.length === 0) {
    return <StateView kind="empty" compact title="No cables yet" detail="A cable joins a port of one switch to a port of another; each direction is a link." />;
  }
  const end = (link: TopologyLink | undefined) =>
    link ? (
      <>
        <Link to={paths.switch.href(link.switch_id)}>{switchName.get(link.switch_id) ?? `switch ${link.switch_id}`}</Link>
        <span className="muted"> · </span>
        <Link to={paths.link.href(link.id)}>{link.name}</Link>
        <span className="muted"> (port {link.port}, {formatRate(link.capacity_bps)} out)</span>
      </>
    ) : (
      '…'
    );
  const row = (cable: TopologyCable) =>
    editing === cable.id ? (
      <tr key={cable.id}>
        <td colSpan={canAct ? 5 : 4}>
          <CableForm topology={topology} cable={cable} onDone={() => setEditing(null)} onCancel={() => setEditing(null)} />
        </td>
      </tr>
    ) : (
      <tr key={cable.id}>
        <td>{cable.name}</td>
        <td>{end(links.get(cable.a_link_id))}</td>
        <td>{end(links.get(cable.b_link_id))}</td>
        <td className="num">{formatDelay(cable.propagation_s)}</td>
        {canAct && (
          <td className="nowrap">
            <Button size="sm" onClick={() => setEditing(cable.id)}>
              Edit
            </Button>{' '}
            <Button size="sm" variant="danger" busy={remove.isPending && remove.variables === cable.id} onClick={() => remove.mutate(cable.id)} aria-label={`Delete cable ${cable.name}`}>
              Delete
            </Button>
          </td>
        )}
      </tr>
    );
  return (
    <>
      {remove.error && <Notice tone="bad" title="Not deleted">{errorMessage(remove.error)}</Notice>}
      <div className="table-wrap">
        <table className="table" aria-label="Cables">
          <thead>
            <tr>
              <th scope="col">Cable</th>
              <th scope="col">End A</th>
              <th scope="col">End B</th>
              <th scope="col" className="num">Propagation</th>
              {canAct && <th scope="col" />}
            </tr>
          </thead>
          <tbody>{topology.cables.map(row)}</tbody>
        </table>
      </div>
    </>
  );
}
