import { ReportPage } from '@/features/reports/components/report-page';

export function ReportsRoute() {
  return <ReportPage />;
}
