import { useState } from 'react';
import { Link } from 'react-router';

import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { QueryView } from '@/components/ui/query-view';
import { StateView } from '@/components/ui/states';
import { paths } from '@/config/paths';
import { formatDateTime, formatRelative } from '@/lib/format';
import { errorMessage } from '@/lib/problem';

import { useAckAlert } from '../api/ack-alert';
import { RULE_LABELS, useAlerts, type Alert, type AlertState } from '../api/get-alerts';
import { useAlertStream } from '../api/use-alert-stream';

const TABS: { value: AlertState; label: string }[] = [
  { value: 'firing', label: 'Firing' },
  { value: 'resolved', label: 'Resolved' },
];

export function AlertRow({ alert, canAck, compact }: { alert: Alert; canAck: boolean; compact?: boolean }) {
  const ack = useAckAlert();
  return (
    <tr data-testid="alert-row" data-state={alert.state}>
      <td>
        <Badge tone={alert.state === 'resolved' ? 'ok' : 'bad'}>{alert.state}</Badge>
      </td>
      <td>
        <Link to={paths.slice.href(alert.slice_id)}>{alert.slice_name}</Link>
      </td>
      <td>
        <strong data-rule={alert.rule}>{RULE_LABELS[alert.rule]}</strong>
        <div>{alert.message}</div>
        {ack.error && <div className="field-error">{errorMessage(ack.error)}</div>}
      </td>
      <td className="nowrap" title={formatDateTime(alert.started_at)}>
        {formatRelative(alert.started_at)}
        {alert.resolved_at && !compact && <div className="muted small">resolved {formatRelative(alert.resolved_at)}</div>}
      </td>
      <td className="cell-actions">
        {alert.acknowledged_at ? (
          <span className="muted small">acknowledged</span>
        ) : canAck ? (
          <Button size="sm" busy={ack.isPending} onClick={() => ack.mutate(alert.id)}>
            Acknowledge
          </Button>
        ) : null}
      </td>
    </tr>
  );
}

export function AlertsTable({ alerts, canAck, compact }: { alerts: Alert[]; canAck: boolean; compact?: boolean }) {
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Alerts">
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Slice</th>
            <th scope="col">What</th>
            <th scope="col">Since</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <AlertRow key={a.id} alert={a} canAck={canAck} {...(compact ? { compact } : {})} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Firing and resolved alerts with acknowledgement, each linked to its slice; live (alert stream). */
export function AlertsList({ canAck }: { canAck: boolean }) {
  const [tab, setTab] = useState<AlertState>('firing');
  const alerts = useAlerts({ state: tab });
  useAlertStream();
  return (
    <div>
      <div className="tabs" role="tablist" aria-label="Alert state">
        {TABS.map((t) => (
          <button key={t.value} type="button" role="tab" className="tab" aria-selected={tab === t.value} onClick={() => setTab(t.value)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel">
        <QueryView
          query={alerts}
          what="alerts"
          isEmpty={(d) => d.data.length === 0}
          empty={
            tab === 'firing' ? (
              <StateView kind="empty" title="Nothing is firing" detail="Every slice is within its SLA." />
            ) : (
              <StateView kind="empty" title="No resolved alerts" />
            )
          }
        >
          {(data) => <AlertsTable alerts={data.data} canAck={canAck} />}
        </QueryView>
        {!canAck && tab === 'firing' && (
          <div style={{ marginTop: 10 }}>
            <Notice tone="info">Operators and admins acknowledge alerts; your role sees them.</Notice>
          </div>
        )}
      </div>
    </div>
  );
}

/** The firing alerts, for the overview; live (alert stream). */
export function FiringAlerts({ canAck }: { canAck: boolean }) {
  const alerts = useAlerts({ state: 'firing' });
  useAlertStream();
  return (
    <QueryView
      query={alerts}
      what="alerts"
      compact
      isEmpty={(d) => d.data.length === 0}
      empty={<StateView kind="empty" compact title="No alert is firing" detail="Every slice is within its SLA." />}
    >
      {(data) => <AlertsTable alerts={data.data.slice(0, 8)} canAck={canAck} compact />}
    </QueryView>
  );
}
