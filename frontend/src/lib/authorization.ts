import type { Role, UserPublic } from './api/schema';

/** Each role includes the ones before it (as `Role.rank` in the backend). */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export const ROLE_LABELS: Record<Role, string> = {
  viewer: 'Viewer (read only)',
  operator: 'Operator (changes the network)',
  admin: 'Administrator (manages users)',
};

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** The user may do what `needed` may (and is active). */
export function hasRole(user: Pick<UserPublic, 'role' | 'is_active'> | null | undefined, needed: Role): boolean {
  return !!user && user.is_active && roleRank(user.role) >= roleRank(needed);
}
