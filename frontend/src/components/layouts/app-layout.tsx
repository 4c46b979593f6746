import type { ReactNode } from 'react';
import { NavLink, Outlet } from 'react-router';

import { Badge } from '@/components/ui/badge';
import { paths } from '@/config/paths';
import type { Role } from '@/lib/api/schema';
import { useAuthorization, useLogout } from '@/lib/auth';

import { ConnectionBanner } from './connection-banner';

interface NavItem {
  to: string;
  label: string;
  icon: string;
  role?: Role;
  end?: boolean;
}

const NAV: NavItem[] = [
  { to: paths.overview.href(), label: 'Overview', icon: '◫', end: true },
  { to: paths.slices.href(), label: 'Slices', icon: '☰' },
  { to: paths.links.href(), label: 'Links', icon: '⇄' },
  { to: paths.alerts.href(), label: 'Alerts', icon: '⚑' },
  { to: paths.switches.href(), label: 'Switches', icon: '▦' },
  { to: paths.topology.href(), label: 'Topology', icon: '⌘' },
  { to: paths.reports.href(), label: 'Reports', icon: '▤' },
  { to: paths.changes.href(), label: 'Change log', icon: '≡', role: 'operator' },
  { to: paths.users.href(), label: 'Users', icon: '◉', role: 'admin' },
];

/** The frame of every signed-in page: navigation (only what the role may use) and the user. */
export function AppLayout({ children }: { children?: ReactNode }) {
  const { user, can } = useAuthorization();
  const logout = useLogout();
  return (
    <div className="app-shell">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <aside className="sidebar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span>sliceportal</span>
        </div>
        <nav aria-label="Main">
          <ul className="nav-list">
            {NAV.filter((item) => !item.role || can(item.role)).map((item) => (
              <li key={item.to}>
                <NavLink
                  to={item.to}
                  end={item.end ?? false}
                  className={({ isActive }) => `nav-link ${isActive ? 'active' : ''}`}
                >
                  <span className="nav-icon" aria-hidden="true">
                    {item.icon}
                  </span>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        {user && (
          <div className="sidebar-user">
            <div className="sidebar-user-name" data-testid="current-user">
              {user.full_name || user.username}
            </div>
            <Badge tone={user.role === 'viewer' ? 'neutral' : 'info'}>{user.role}</Badge>
            <button type="button" className="link-button" onClick={() => logout.mutate()} disabled={logout.isPending}>
              Sign out
            </button>
          </div>
        )}
      </aside>
      <div className="main-column">
        <ConnectionBanner />
        <main id="main" className="main" tabIndex={-1}>
          {children ?? <Outlet />}
        </main>
      </div>
    </div>
  );
}
