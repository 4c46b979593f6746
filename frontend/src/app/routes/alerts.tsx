import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { AlertsList } from '@/features/alerts/components/alerts-list';
import { useAuthorization } from '@/lib/auth';

export function AlertsRoute() {
  const { can } = useAuthorization();
  return (
    <div className="stack">
      <PageHeader title="Alerts" description="SLA alerts: a slice above its delay, below its throughput, or above its loss or mark ratio." />
      <Card>
        <AlertsList canAck={can('operator')} />
      </Card>
    </div>
  );
}
