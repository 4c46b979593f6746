import { Badge } from '@/components/ui/badge';
import { formatDelay } from '@/lib/format';

import type { SliceHealth } from './use-slice-bounds';

export function SliceHealthBadge({ health }: { health: SliceHealth }) {
  if (health.status === 'unknown') return <Badge>checking…</Badge>;
  if (health.status === 'bad') {
    return (
      <Badge tone="bad" title="The worst-case delay exceeds the target on a link">
        misses bound
      </Badge>
    );
  }
  return (
    <Badge tone="ok" title="Worst-case delay within the target on every link">
      within bound{health.slackS != null ? ` · +${formatDelay(health.slackS, 2)}` : ''}
    </Badge>
  );
}
