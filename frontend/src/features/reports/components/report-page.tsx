/**
 * The capacity report page: scope and parameters from the URL, the report from the API, and
 * print / download actions. Scoped links (`/reports?link=5`) come from the link and switch pages.
 */
import { useSearchParams } from 'react-router';

import { PageHeader } from '@/components/ui/page-header';
import { QueryView } from '@/components/ui/query-view';

import { useReport } from '../api/get-report';

import { ReportActions } from './report-actions';
import { ReportControls } from './report-controls';
import { searchFromSettings, settingsFromSearch, type ReportSettings } from './report-settings';
import { ReportParametersLine, ReportView } from './report-view';

export function ReportPage() {
  const [search, setSearch] = useSearchParams();
  const settings = settingsFromSearch(search);
  const report = useReport(settings.scope, settings.parameters);
  const data = report.data;
  const change = (next: ReportSettings) => setSearch(searchFromSettings(next));

  return (
    <div className="stack report-page">
      <PageHeader
        title={data ? `Capacity report: ${data.scope.name}` : 'Capacity report'}
        description={
          data ? (
            <ReportParametersLine report={data} />
          ) : (
            'How much capacity each link needs for its slices, under both delay models, now and as rates grow.'
          )
        }
        actions={data && !report.isPlaceholderData && <ReportActions report={data} request={settings} />}
      />
      <ReportControls key={search.toString()} settings={settings} onChange={change} />
      {report.isPlaceholderData && report.isFetching && <p className="muted small no-print" role="status">Updating the report…</p>}
      <QueryView query={report} what="the report">
        {(r) => <ReportView report={r} />}
      </QueryView>
    </div>
  );
}
