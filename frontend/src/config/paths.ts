/** Every client route in one place: components link with these, never with literals. */
export const paths = {
  login: { path: '/login', href: (redirectTo?: string) => withRedirect('/login', redirectTo) },
  overview: { path: '/', href: () => '/' },
  slices: { path: '/slices', href: () => '/slices' },
  sliceNew: { path: '/slices/new', href: () => '/slices/new' },
  slice: { path: '/slices/:sliceId', href: (id: number) => `/slices/${id}` },
  sliceEdit: { path: '/slices/:sliceId/edit', href: (id: number) => `/slices/${id}/edit` },
  links: { path: '/links', href: () => '/links' },
  link: { path: '/links/:linkId', href: (id: number) => `/links/${id}` },
  alerts: { path: '/alerts', href: () => '/alerts' },
  switches: { path: '/switches', href: () => '/switches' },
  switch: { path: '/switches/:switchId', href: (id: number) => `/switches/${id}` },
  topology: {
    path: '/topology',
    /** The network, with a slice's links highlighted (`?slice=4`). */
    href: (sliceId?: number) => (sliceId === undefined ? '/topology' : `/topology?slice=${sliceId}`),
  },
  reports: {
    path: '/reports',
    /** The capacity report of the network, or of one switch or link (`?switch=3`, `?link=5`). */
    href: (scope?: { kind: 'switch' | 'link'; id: number }) => (scope ? `/reports?${scope.kind}=${scope.id}` : '/reports'),
  },
  changes: { path: '/changes', href: () => '/changes' },
  users: { path: '/users', href: () => '/users' },
} as const;

function withRedirect(path: string, redirectTo?: string): string {
  if (!redirectTo || redirectTo === '/' || redirectTo.startsWith('/login')) return path;
  return `${path}?redirectTo=${encodeURIComponent(redirectTo)}`;
}
