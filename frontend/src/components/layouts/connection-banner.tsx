import { useHealth } from '@/api/get-health';
import { Button } from '@/components/ui/button';

/**
 * Says so when the portal stops answering, and keeps checking (every 3 s while down): the
 * pages' own queries refetch as soon as it answers again.
 */
export function ConnectionBanner() {
  const health = useHealth();
  if (!health.isError) return null;
  return (
    <div className="connection-banner" role="alert">
      <span className="pulse" aria-hidden="true" />
      <span>
        <strong>Connection to the portal lost.</strong> Reconnecting automatically; what you
        see may be out of date.
      </span>
      <Button size="sm" variant="ghost" onClick={() => void health.refetch()}>
        Retry now
      </Button>
    </div>
  );
}
