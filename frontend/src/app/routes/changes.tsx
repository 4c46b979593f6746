import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { ChangesList } from '@/features/changes/components/changes-list';
import { useAuthorization } from '@/lib/auth';

export function ChangesRoute() {
  const { can } = useAuthorization();
  return (
    <div className="stack">
      <PageHeader title="Change log" description="Who changed what and when, with the values before and after." />
      <Card>
        <ChangesList resolveUsers={can('admin')} />
      </Card>
    </div>
  );
}
