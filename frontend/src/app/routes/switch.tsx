import { useState } from 'react';
import { Link, useNavigate } from 'react-router';

import { useSwitch } from '@/api/get-switch';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { Notice } from '@/components/ui/notice';
import { PageHeader } from '@/components/ui/page-header';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { LinkForm } from '@/features/links/components/link-form';
import { LinksTable } from '@/features/links/components/links-table';
import { useDeleteSwitch } from '@/features/switches/api/delete-switch';
import { SwitchForm } from '@/features/switches/components/switch-form';
import { SwitchOperations } from '@/features/switches/components/switch-operations';
import { LastReconcile, PipelineSync, SwitchErrors, SwitchStateBadge } from '@/features/switches/components/switch-state-badge';
import { useAuthorization } from '@/lib/auth';
import { formatDateTime } from '@/lib/format';
import { ApiError, errorMessage } from '@/lib/problem';

import { NotFoundRoute } from './not-found';
import { useIdParam } from './use-id-param';

export function SwitchRoute() {
  const id = useIdParam('switchId');
  if (id === null) return <NotFoundRoute what="This switch" />;
  return <SwitchDetail id={id} />;
}

function SwitchDetail({ id }: { id: number }) {
  const sw = useSwitch(id);
  const { can } = useAuthorization();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [addingLink, setAddingLink] = useState(false);
  const remove = useDeleteSwitch();
  if (sw.isError) {
    if (sw.error instanceof ApiError && sw.error.status === 404) return <NotFoundRoute what={`Switch ${id}`} />;
    return <QueryErrorState error={sw.error} what="the switch" onRetry={() => void sw.refetch()} />;
  }
  if (!sw.data) return <StateView kind="loading" title="Loading the switch…" />;
  const s = sw.data;
  const operator = can('operator');
  return (
    <div className="stack">
      <PageHeader
        breadcrumb={<Link to={paths.switches.href()}>Switches</Link>}
        title={<>{s.name} <SwitchStateBadge state={s.state} /></>}
        description={`${s.kind} at ${s.address} · device ${s.device_id} · election id ${s.election_id}${s.description ? ` · ${s.description}` : ''}`}
        actions={
          <>
            <Link className="btn" to={paths.reports.href({ kind: 'switch', id: s.id })}>Capacity report</Link>
            {operator && !editing && (
              <>
                <Button onClick={() => setEditing(true)}>Edit</Button>
                <Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate(s.id, { onSuccess: () => navigate(paths.switches.href()) })}>Delete</Button>
              </>
            )}
          </>
        }
      />
      {remove.error && <Notice tone="bad" title="Not deleted">{errorMessage(remove.error)}</Notice>}
      {editing && (
        <Card title={`Edit ${s.name}`}>
          <SwitchForm sw={s} onDone={() => setEditing(false)} onCancel={() => setEditing(false)} />
        </Card>
      )}
      <div className="grid-2">
        <Card title="Deployment">
          <SwitchOperations switchId={s.id} canAct={operator} />
        </Card>
        <Card title="Sync and errors">
          <dl className="kv">
            <dt>Reachable</dt>
            <dd><SwitchStateBadge state={s.state} /></dd>
            <dt>Pipeline in sync</dt>
            <dd><PipelineSync sw={s} /></dd>
            <dt>Last reconcile</dt>
            <dd><LastReconcile sw={s} /></dd>
            <dt>Last contact</dt>
            <dd>{s.sync?.last_contact_at ? formatDateTime(s.sync.last_contact_at) : <span className="muted">never</span>}</dd>
            <dt>Errors</dt>
            <dd><SwitchErrors sw={s} /></dd>
            <dt>TLS</dt>
            <dd>{s.tls_ca_path ? 'CA set' : 'plaintext'}{s.tls_cert_path ? ', client certificate' : ''}</dd>
          </dl>
        </Card>
      </div>
      <Card title="Links of this switch" actions={operator && !addingLink && <Button size="sm" onClick={() => setAddingLink(true)}>Add link</Button>}>
        {addingLink && (
          <div style={{ marginBottom: 14 }}>
            <LinkForm switchId={s.id} onDone={() => setAddingLink(false)} onCancel={() => setAddingLink(false)} />
          </div>
        )}
        <LinksTable filters={{ switch_id: s.id }} />
      </Card>
    </div>
  );
}
