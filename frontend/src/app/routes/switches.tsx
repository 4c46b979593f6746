import { useState } from 'react';
import { useNavigate } from 'react-router';

import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { paths } from '@/config/paths';
import { SwitchForm } from '@/features/switches/components/switch-form';
import { SwitchesTable } from '@/features/switches/components/switches-table';
import { useAuthorization } from '@/lib/auth';

export function SwitchesRoute() {
  const { can } = useAuthorization();
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);
  const add = can('operator') && !adding ? <Button variant="primary" onClick={() => setAdding(true)}>New switch</Button> : undefined;
  return (
    <div className="stack">
      <PageHeader title="Switches" description="P4Runtime targets: the portal deploys the pipeline and the slices' entries to them and keeps them in sync." actions={add} />
      {adding && (
        <Card title="New switch">
          <SwitchForm onDone={(sw) => navigate(paths.switch.href(sw.id))} onCancel={() => setAdding(false)} />
        </Card>
      )}
      <Card>
        <SwitchesTable emptyAction={add} />
      </Card>
    </div>
  );
}
