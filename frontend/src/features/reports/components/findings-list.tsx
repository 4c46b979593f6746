/** The report's findings, most severe first (the API's order): what to do, then why. */
import { Badge } from '@/components/ui/badge';
import { StateView } from '@/components/ui/states';
import type { Finding } from '@/lib/api/schema';

import { SEVERITY_TONES } from './report-format';

export function FindingsList({ findings }: { findings: Finding[] }) {
  if (findings.length === 0) {
    return (
      <StateView
        kind="empty"
        compact
        title="No findings"
        detail="Every slice meets its per-hop and end-to-end targets under both models, with room to grow over the horizon."
      />
    );
  }
  return (
    <ol className="findings" aria-label="Findings">
      {findings.map((f, index) => (
        <li key={`${f.subject}-${index}`} className={`finding finding-${f.severity}`} data-testid="finding" data-severity={f.severity}>
          <div className="finding-head">
            <Badge tone={SEVERITY_TONES[f.severity]}>{f.severity}</Badge>
            <span className="finding-subject">{f.subject}</span>
          </div>
          <p className="finding-recommendation">{f.recommendation}</p>
          <p className="finding-detail">{f.finding}</p>
        </li>
      ))}
    </ol>
  );
}
