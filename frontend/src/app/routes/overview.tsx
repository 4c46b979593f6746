import { Link } from 'react-router';

import { useLinks } from '@/api/get-links';
import { useSlices } from '@/api/get-slices';
import { useSwitches } from '@/api/get-switches';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { paths } from '@/config/paths';
import { FiringAlerts } from '@/features/alerts/components/alerts-list';
import { LinksTable } from '@/features/links/components/links-table';
import { SwitchesTable } from '@/features/switches/components/switches-table';
import { useAuthorization } from '@/lib/auth';

function Stat({ label, value, note }: { label: string; value: React.ReactNode; note?: React.ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {note && <div className="stat-note">{note}</div>}
    </div>
  );
}

export function OverviewRoute() {
  const { can } = useAuthorization();
  const switches = useSwitches();
  const links = useLinks();
  const slices = useSlices();
  const sw = switches.data?.data ?? [];
  const sl = slices.data?.data ?? [];
  return (
    <div className="stack">
      <PageHeader title="Overview" description="The switches, the links and their slices, and what is firing." />
      <div className="stats" style={{ marginBottom: 0 }}>
        <Stat label="Switches" value={switches.data ? switches.data.count : '…'} note={switches.data ? `${sw.filter((s) => s.state === 'reachable').length} reachable` : undefined} />
        <Stat label="Links" value={links.data ? links.data.count : '…'} />
        <Stat label="Slices" value={slices.data ? slices.data.count : '…'} note={slices.data ? `${sl.filter((s) => s.state === 'active').length} active · ${sl.filter((s) => s.state === 'pending').length} pending` : undefined} />
        <Stat label="Your role" value={can('admin') ? 'Admin' : can('operator') ? 'Operator' : 'Viewer'} note={can('operator') ? 'you may change the network' : 'read only'} />
      </div>
      <Card title="Firing alerts" actions={<Link to={paths.alerts.href()}>All alerts</Link>}>
        <FiringAlerts canAck={can('operator')} />
      </Card>
      <Card title="Links" subtitle="Utilisation by rate limits and the worst slack of the slices on each link." actions={<Link to={paths.links.href()}>All links</Link>}>
        <LinksTable />
      </Card>
      <Card title="Switches" actions={<Link to={paths.switches.href()}>All switches</Link>}>
        <SwitchesTable />
      </Card>
    </div>
  );
}
