/** The report at a glance: what it covers, what fails under each model, the tightest link. */
import { Badge } from '@/components/ui/badge';
import type { Summary } from '@/lib/api/schema';

import { SEVERITIES, SEVERITY_TONES } from './report-format';

export function ReportSummary({ summary }: { summary: Summary }) {
  const bad = (count: number) => (count > 0 ? 'bound-bad' : '');
  return (
    <div className="stats report-summary" data-testid="report-summary">
      <div className="stat">
        <div className="stat-label">Links · slices</div>
        <div className="stat-value">
          {summary.links} · {summary.slices}
        </div>
        <div className="stat-note">in this report</div>
      </div>
      <div className="stat">
        <div className="stat-label">Links not admissible</div>
        <div className="stat-value">
          <span className={bad(summary.inadmissible_links.harkous)}>{summary.inadmissible_links.harkous}</span>
          {' · '}
          <span className={bad(summary.inadmissible_links.netcalc)}>{summary.inadmissible_links.netcalc}</span>
        </div>
        <div className="stat-note">paper · network calculus</div>
      </div>
      <div className="stat">
        <div className="stat-label">End-to-end misses</div>
        <div className="stat-value">
          <span className={bad(summary.e2e_violations.harkous)}>{summary.e2e_violations.harkous}</span>
          {' · '}
          <span className={bad(summary.e2e_violations.netcalc)}>{summary.e2e_violations.netcalc}</span>
        </div>
        <div className="stat-note">slices, paper · network calculus</div>
      </div>
      <div className="stat">
        <div className="stat-label">Tightest link</div>
        <div className="stat-value report-stat-name">{summary.tightest_link ?? '—'}</div>
        <div className="stat-note row" style={{ gap: 6 }}>
          {SEVERITIES.map((severity) => (
            <Badge key={severity} tone={(summary.findings[severity] ?? 0) > 0 ? SEVERITY_TONES[severity] : 'neutral'}>
              {summary.findings[severity] ?? 0} {severity}
            </Badge>
          ))}
        </div>
      </div>
    </div>
  );
}
