import { useState } from 'react';
import { useNavigate } from 'react-router';

import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { paths } from '@/config/paths';
import { LinkForm } from '@/features/links/components/link-form';
import { LinksTable } from '@/features/links/components/links-table';
import { useAuthorization } from '@/lib/auth';

export function LinksRoute() {
  const { can } = useAuthorization();
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);
  const add = can('operator') && !adding ? <Button variant="primary" onClick={() => setAdding(true)}>New link</Button> : undefined;
  return (
    <div className="stack">
      <PageHeader title="Links" description="Egress ports with their capacity and priority queues; open one for its slices by level, the delay-vs-capacity chart and a what-if." actions={add} />
      {adding && (
        <Card title="New link">
          <LinkForm onDone={(link) => navigate(paths.link.href(link.id))} onCancel={() => setAdding(false)} />
        </Card>
      )}
      <Card>
        <LinksTable emptyAction={add} />
      </Card>
    </div>
  );
}
