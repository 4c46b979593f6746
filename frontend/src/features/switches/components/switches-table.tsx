import { Link } from 'react-router';

import { useSwitches } from '@/api/get-switches';
import { QueryView } from '@/components/ui/query-view';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';

import { LastReconcile, PipelineSync, SwitchErrors, SwitchStateBadge } from './switch-state-badge';

const KIND_LABELS: Record<string, string> = {
  bmv2: 'BMv2',
  emulator: 'Emulator',
  tofino: 'Tofino',
  other: 'Other',
};

/** Switches with reachability, pipeline sync, last reconcile and their errors. */
export function SwitchesTable({ emptyAction }: { emptyAction?: React.ReactNode }) {
  const switches = useSwitches();
  return (
    <QueryView
      query={switches}
      what="switches"
      isEmpty={(d) => d.data.length === 0}
      empty={<StateView kind="empty" title="No switches yet" detail="Add a P4Runtime target (BMv2, the emulator, …) to deploy slices to." action={emptyAction} />}
    >
      {(data) => (
        <div className="table-wrap">
          <table className="table" aria-label="Switches">
            <thead>
              <tr>
                <th scope="col">Switch</th>
                <th scope="col">Kind</th>
                <th scope="col">Address</th>
                <th scope="col">Reachable</th>
                <th scope="col">Pipeline in sync</th>
                <th scope="col">Last reconcile</th>
                <th scope="col">Errors</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((sw) => (
                <tr key={sw.id}>
                  <td>
                    <Link to={paths.switch.href(sw.id)}>{sw.name}</Link>
                  </td>
                  <td>{KIND_LABELS[sw.kind] ?? sw.kind}</td>
                  <td className="mono">{sw.address}</td>
                  <td>
                    <SwitchStateBadge state={sw.state} />
                  </td>
                  <td><PipelineSync sw={sw} /></td>
                  <td><LastReconcile sw={sw} /></td>
                  <td><SwitchErrors sw={sw} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </QueryView>
  );
}
