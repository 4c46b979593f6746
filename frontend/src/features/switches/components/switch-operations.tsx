import { Button } from '@/components/ui/button';
import { Notice } from '@/components/ui/notice';
import { errorMessage } from '@/lib/problem';

import { useSwitchOperation } from '../api/switch-operations';

/** Deploy and reconcile-now buttons; the workers do the work, the sync state below shows it. */
export function SwitchOperations({ switchId, canAct }: { switchId: number; canAct: boolean }) {
  const deploy = useSwitchOperation('deploy');
  const reconcile = useSwitchOperation('reconcile');
  const error = deploy.error ?? reconcile.error;
  const done = deploy.data ?? reconcile.data;
  return (
    <div className="stack" style={{ gap: 10 }}>
      <div className="row">
        <Button variant="primary" disabled={!canAct} busy={deploy.isPending} onClick={() => { reconcile.reset(); deploy.mutate(switchId); }}>
          Deploy pipeline and entries
        </Button>
        <Button disabled={!canAct} busy={reconcile.isPending} onClick={() => { deploy.reset(); reconcile.mutate(switchId); }}>
          Reconcile now
        </Button>
        {!canAct && <span className="muted">Your role may not deploy.</span>}
      </div>
      {error && <Notice tone="bad" title="The switch operation failed">{errorMessage(error)}</Notice>}
      {done && (
        <Notice tone="ok" title="Requested">
          {done.deploy ? 'Deploy' : 'Reconciliation'} queued (task <span className="mono">{done.task_id.slice(0, 12)}</span>); the sync state below updates when the workers finish.
        </Notice>
      )}
    </div>
  );
}
