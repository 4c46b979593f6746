import { createBrowserRouter, Outlet, RouterProvider } from 'react-router';

import { AppLayout } from '@/components/layouts/app-layout';
import { paths } from '@/config/paths';

import { ProtectedRoute, RequireRole } from './route-guards';
import { AlertsRoute } from './routes/alerts';
import { ChangesRoute } from './routes/changes';
import { LinkRoute } from './routes/link';
import { LinksRoute } from './routes/links';
import { LoginRoute } from './routes/login';
import { NotFoundRoute } from './routes/not-found';
import { OverviewRoute } from './routes/overview';
import { ReportsRoute } from './routes/reports';
import { SliceRoute } from './routes/slice';
import { SliceEditRoute } from './routes/slice-edit';
import { SliceNewRoute } from './routes/slice-new';
import { SlicesRoute } from './routes/slices';
import { SwitchRoute } from './routes/switch';
import { SwitchesRoute } from './routes/switches';
import { TopologyRoute } from './routes/topology';
import { UsersRoute } from './routes/users';

export const routes = [
  { path: paths.login.path, element: <LoginRoute /> },
  {
    element: (
      <ProtectedRoute>
        <AppLayout>
          <Outlet />
        </AppLayout>
      </ProtectedRoute>
    ),
    children: [
      { path: paths.overview.path, element: <OverviewRoute /> },
      { path: paths.slices.path, element: <SlicesRoute /> },
      { path: paths.sliceNew.path, element: <RequireRole needs="operator"><SliceNewRoute /></RequireRole> },
      { path: paths.slice.path, element: <SliceRoute /> },
      { path: paths.sliceEdit.path, element: <RequireRole needs="operator"><SliceEditRoute /></RequireRole> },
      { path: paths.links.path, element: <LinksRoute /> },
      { path: paths.link.path, element: <LinkRoute /> },
      { path: paths.alerts.path, element: <AlertsRoute /> },
      { path: paths.switches.path, element: <SwitchesRoute /> },
      { path: paths.switch.path, element: <SwitchRoute /> },
      { path: paths.topology.path, element: <TopologyRoute /> },
      { path: paths.reports.path, element: <ReportsRoute /> },
      { path: paths.changes.path, element: <RequireRole needs="operator"><ChangesRoute /></RequireRole> },
      { path: paths.users.path, element: <RequireRole needs="admin"><UsersRoute /></RequireRole> },
      { path: '*', element: <NotFoundRoute /> },
    ],
  },
];

const router = createBrowserRouter(routes);

export function AppRouter() {
  return <RouterProvider router={router} />;
}
