/**
 * The capacity planning report, as the API computed it: summary, findings with their
 * recommendations first, then each link and each slice. Nothing is recomputed here.
 */
import { Card } from '@/components/ui/card';
import { StateView } from '@/components/ui/states';
import type { Report } from '@/lib/api/schema';
import { formatDateTime } from '@/lib/format';

import { FindingsList } from './findings-list';
import { LinkReportCard } from './link-report-card';
import { ReportSummary } from './report-summary';
import { EndToEndTable, HeadroomTable } from './slices-report';

function describeWindow(seconds: number | null): string {
  if (seconds === null) return 'no telemetry';
  if (seconds >= 86400 && seconds % 86400 === 0) return `telemetry of the last ${seconds / 86400} d`;
  if (seconds >= 3600 && seconds % 3600 === 0) return `telemetry of the last ${seconds / 3600} h`;
  return `telemetry of the last ${Math.round(seconds / 60)} min`;
}

export function ReportParametersLine({ report }: { report: Report }) {
  const p = report.parameters;
  return (
    <>
      Generated {formatDateTime(report.generated_at)} · rates growing {p.growth_percent_per_month} %/month over {p.horizon_months} months ·{' '}
      {describeWindow(p.telemetry_window_s)}
    </>
  );
}

export function ReportView({ report }: { report: Report }) {
  if (report.links.length === 0) {
    return (
      <StateView
        kind="empty"
        title={report.scope.kind === 'switch' ? 'This switch has no links yet' : 'No links in the network yet'}
        detail="A report plans link capacity: add a link (an egress port with its capacity) and the slices that cross it."
      />
    );
  }
  return (
    <div className="stack report" data-testid="report">
      <ReportSummary summary={report.summary} />
      <Card title="Findings and recommendations" subtitle="Most severe first; each says what to change." id="report-findings">
        <FindingsList findings={report.findings} />
      </Card>
      <h2 className="report-section-title">Links</h2>
      {report.links.map((link) => (
        <LinkReportCard key={link.id} link={link} parameters={report.parameters} />
      ))}
      <h2 className="report-section-title">Slices</h2>
      {report.slices.length === 0 ? (
        <StateView kind="empty" title="No slices in this report" detail="No slice crosses these links yet." />
      ) : (
        <>
          <Card title="End-to-end bounds" subtitle="The sum of the per-hop bounds along each slice's path, against its end-to-end target." id="report-e2e">
            <EndToEndTable slices={report.slices} />
          </Card>
          <Card
            title="Headroom and measurements"
            subtitle="How much more each slice could send before some target on its path breaks (each link under its own model), and what the switches measured."
            id="report-headroom"
          >
            <HeadroomTable slices={report.slices} telemetry={report.parameters.telemetry_window_s !== null} />
          </Card>
        </>
      )}
    </div>
  );
}
